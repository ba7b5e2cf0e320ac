package dev.devicebridge.snapshothelper.core;

/** left, top, right, bottom, as android.graphics.Rect. */
public final class Rect {
    public final int left;
    public final int top;
    public final int right;
    public final int bottom;

    public Rect(int left, int top, int right, int bottom) {
        this.left = left;
        this.top = top;
        this.right = right;
        this.bottom = bottom;
    }

    public int width() {
        return right - left;
    }

    public int height() {
        return bottom - top;
    }

    public boolean isEmpty() {
        return right <= left || bottom <= top;
    }

    /** uiautomator's bounds form: {@code [l,t][r,b]}. */
    public String format() {
        return "[" + left + "," + top + "][" + right + "," + bottom + "]";
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Rect)) return false;
        Rect r = (Rect) o;
        return r.left == left && r.top == top && r.right == right && r.bottom == bottom;
    }

    @Override
    public int hashCode() {
        return ((left * 31 + top) * 31 + right) * 31 + bottom;
    }

    @Override
    public String toString() {
        return format();
    }
}
