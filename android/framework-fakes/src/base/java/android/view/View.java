/*
 * Fake of frameworks/base/core/java/android/view/View.java @ android-6.0.1_r1: the state a view
 * built in code keeps without a window — context, padding, layout params, its parent, and focus.
 *
 * Focus as AOSP: requestFocus() is requestFocus(FOCUS_DOWN, null); a view that is not focusable
 * answers false (View is not focusable by default; TextView makes itself focusable when editable);
 * gaining focus marks the view focused and calls its parent's requestChildFocus, which takes the
 * focus away from whatever else in the same tree had it (handleFocusGainInternal). A view that
 * already has the focus keeps it and answers true.
 *
 * Not modelled: visibility (every view is VISIBLE), touch mode (focusableInTouchMode), windows and
 * the focus ViewRootImpl assigns when one attaches, focus listeners/onFocusChanged, measuring,
 * layout and drawing. setFocusable(false) does not take the focus away here.
 */
package android.view;

import android.content.Context;
import android.graphics.Rect;

public class View {
    public static final int FOCUS_FORWARD = 0x00000002;
    public static final int FOCUS_DOWN = 0x00000082;

    private final Context mContext;
    ViewGroup mParent;
    ViewGroup.LayoutParams mLayoutParams;
    private boolean mFocusable;
    /** PFLAG_FOCUSED. */
    private boolean mFocused;
    private int mPaddingLeft;
    private int mPaddingTop;
    private int mPaddingRight;
    private int mPaddingBottom;

    public View(Context context) {
        mContext = context;
    }

    public final Context getContext() {
        return mContext;
    }

    public void setPadding(int left, int top, int right, int bottom) {
        mPaddingLeft = left;
        mPaddingTop = top;
        mPaddingRight = right;
        mPaddingBottom = bottom;
    }

    public int getPaddingLeft() {
        return mPaddingLeft;
    }

    public int getPaddingTop() {
        return mPaddingTop;
    }

    public int getPaddingRight() {
        return mPaddingRight;
    }

    public int getPaddingBottom() {
        return mPaddingBottom;
    }

    public ViewGroup.LayoutParams getLayoutParams() {
        return mLayoutParams;
    }

    public void setLayoutParams(ViewGroup.LayoutParams params) {
        if (params == null) throw new NullPointerException("Layout parameters cannot be null");
        mLayoutParams = params;
    }

    public void setFocusable(boolean focusable) {
        mFocusable = focusable;
    }

    public final boolean isFocusable() {
        return mFocusable;
    }

    public boolean isFocused() {
        return mFocused;
    }

    public boolean hasFocus() {
        return mFocused;
    }

    public View findFocus() {
        return mFocused ? this : null;
    }

    public final boolean requestFocus() {
        return requestFocus(FOCUS_DOWN);
    }

    public final boolean requestFocus(int direction) {
        return requestFocus(direction, null);
    }

    /** requestFocusNoSearch: the view itself, when focusable. */
    public boolean requestFocus(int direction, Rect previouslyFocusedRect) {
        if (!mFocusable) return false;
        if (!mFocused) {
            mFocused = true;
            if (mParent != null) mParent.requestChildFocus(this, this);
        }
        return true;
    }

    /** Hidden: the focus moved elsewhere in the tree (clearFocusInternal without propagation). */
    void unFocus(View focused) {
        mFocused = false;
    }
}
