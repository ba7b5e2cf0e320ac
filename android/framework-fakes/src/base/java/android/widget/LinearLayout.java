/*
 * Fake of frameworks/base/core/java/android/widget/LinearLayout.java @ android-6.0.1_r1: the
 * orientation (HORIZONTAL until set, as a LinearLayout built in code without attributes) and its
 * LayoutParams type. No measuring or layout.
 */
package android.widget;

import android.content.Context;
import android.view.ViewGroup;

public class LinearLayout extends ViewGroup {
    public static final int HORIZONTAL = 0;
    public static final int VERTICAL = 1;

    private int mOrientation = HORIZONTAL;

    public LinearLayout(Context context) {
        super(context);
    }

    public void setOrientation(int orientation) {
        mOrientation = orientation;
    }

    public int getOrientation() {
        return mOrientation;
    }

    /** Weight and gravity are not kept: nothing reads them. */
    public static class LayoutParams extends ViewGroup.MarginLayoutParams {
        public LayoutParams(int width, int height) {
            super(width, height);
        }
    }
}
