/* Fake of frameworks/base/graphics/java/android/graphics/Rect.java @ android-14.0.0_r1: the fields and the few methods the adapters use. */
package android.graphics;

public final class Rect {
    public int left;
    public int top;
    public int right;
    public int bottom;

    public Rect() {}

    public Rect(int left, int top, int right, int bottom) {
        set(left, top, right, bottom);
    }

    public Rect(Rect r) {
        if (r != null) set(r.left, r.top, r.right, r.bottom);
    }

    public void set(int left, int top, int right, int bottom) {
        this.left = left;
        this.top = top;
        this.right = right;
        this.bottom = bottom;
    }

    public void set(Rect src) {
        set(src.left, src.top, src.right, src.bottom);
    }

    public int width() {
        return right - left;
    }

    public int height() {
        return bottom - top;
    }

    /** As AOSP: empty when left >= right or top >= bottom. */
    public boolean isEmpty() {
        return left >= right || top >= bottom;
    }

    @Override
    public String toString() {
        return "Rect(" + left + ", " + top + " - " + right + ", " + bottom + ")";
    }

    /** "[left,top][right,bottom]", as AOSP's. */
    public String toShortString() {
        return "[" + left + "," + top + "][" + right + "," + bottom + "]";
    }
}
