/*
 * Fake of frameworks/base/core/java/android/view/ViewGroup.java @ android-6.0.1_r1: children and
 * the focus chain, with the default descendant focusability (FOCUS_BEFORE_DESCENDANTS).
 *
 * - addView(child, params) appends the child with those params; a child that already has a parent
 *   throws IllegalStateException (addViewInner). A focused child carries its focus into the tree.
 *   The params are kept as given (no checkLayoutParams/generateLayoutParams conversion).
 * - getChildAt answers null out of range, as AOSP does.
 * - requestChildFocus(child, focused): this group stops being focused itself, the child that had
 *   the focus before (if another) loses it, and the request goes up to the parent.
 * - requestFocus(direction, rect): the group itself when focusable, else its children in order
 *   (FOCUS_FORWARD directions, such as FOCUS_DOWN) or in reverse (onRequestFocusInDescendants).
 */
package android.view;

import android.content.Context;
import android.graphics.Rect;
import java.util.ArrayList;
import java.util.List;

public abstract class ViewGroup extends View {
    private final List<View> mChildren = new ArrayList<View>();
    /** The child that has or contains the focus. */
    private View mFocused;

    public ViewGroup(Context context) {
        super(context);
    }

    public void addView(View child, LayoutParams params) {
        if (child.mParent != null) {
            throw new IllegalStateException("The specified child already has a parent. "
                    + "You must call removeView() on the child's parent first.");
        }
        child.setLayoutParams(params);
        mChildren.add(child);
        child.mParent = this;
        if (child.hasFocus()) requestChildFocus(child, child.findFocus());
    }

    public int getChildCount() {
        return mChildren.size();
    }

    public View getChildAt(int index) {
        if (index < 0 || index >= mChildren.size()) return null;
        return mChildren.get(index);
    }

    public void requestChildFocus(View child, View focused) {
        super.unFocus(focused);
        if (mFocused != child) {
            if (mFocused != null) mFocused.unFocus(focused);
            mFocused = child;
        }
        if (mParent != null) mParent.requestChildFocus(this, focused);
    }

    @Override
    void unFocus(View focused) {
        if (mFocused == null) {
            super.unFocus(focused);
        } else {
            mFocused.unFocus(focused);
            mFocused = null;
        }
    }

    @Override
    public boolean hasFocus() {
        return super.hasFocus() || mFocused != null;
    }

    @Override
    public View findFocus() {
        if (isFocused()) return this;
        return mFocused != null ? mFocused.findFocus() : null;
    }

    @Override
    public boolean requestFocus(int direction, Rect previouslyFocusedRect) {
        if (super.requestFocus(direction, previouslyFocusedRect)) return true;
        boolean forward = (direction & FOCUS_FORWARD) != 0;
        int count = mChildren.size();
        for (int i = forward ? 0 : count - 1; forward ? i < count : i >= 0; i += forward ? 1 : -1) {
            if (mChildren.get(i).requestFocus(direction, previouslyFocusedRect)) return true;
        }
        return false;
    }

    public static class LayoutParams {
        public static final int MATCH_PARENT = -1;
        public static final int WRAP_CONTENT = -2;

        public int width;
        public int height;

        public LayoutParams(int width, int height) {
            this.width = width;
            this.height = height;
        }
    }

    /** Margins are not kept: nothing reads them. */
    public static class MarginLayoutParams extends LayoutParams {
        public MarginLayoutParams(int width, int height) {
            super(width, height);
        }
    }
}
