/*
 * Fake of frameworks/base/core/java/android/view/accessibility/AccessibilityNodeInfo.java
 * @ android-14.0.0_r1, over a dev.devicebridge.fakes.FakeAccessibility.Node. The API-23 getters
 * are members; getDrawingOrder (API 24) and getHintText (API 26) are members too, for reflection,
 * and throw below their level (on a device the method does not exist, so an adapter that calls
 * one there is wrong). performAction(ACTION_SET_TEXT) changes the live node only when it is
 * editable and enabled (TextView.performAccessibilityActionInternal), ACTION_CLICK only when
 * clickable and enabled (View.performAccessibilityActionInternal).
 */
package android.view.accessibility;

import android.graphics.Rect;
import android.os.Bundle;
import dev.devicebridge.fakes.FakeAccessibility;
import dev.devicebridge.fakes.Profile;

public class AccessibilityNodeInfo {
    public static final int ACTION_FOCUS = 0x00000001;
    public static final int ACTION_CLICK = 0x00000010;
    public static final int ACTION_LONG_CLICK = 0x00000020;
    public static final int ACTION_SET_TEXT = 0x00200000;
    public static final String ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE = "ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE";

    private final FakeAccessibility.Node node;

    /** Fake-only: the framework fakes wrap the (cached) nodes they answer. */
    public AccessibilityNodeInfo(FakeAccessibility.Node node) {
        this.node = node;
    }

    public CharSequence getClassName() { return node.className; }
    public CharSequence getPackageName() { return node.packageName; }
    public CharSequence getText() { return node.text; }
    public CharSequence getContentDescription() { return node.contentDesc; }
    public String getViewIdResourceName() { return node.viewId; }
    public boolean isCheckable() { return node.checkable; }
    public boolean isChecked() { return node.checked; }
    public boolean isClickable() { return node.clickable; }
    public boolean isEnabled() { return node.enabled; }
    public boolean isEditable() { return node.editable; }
    public boolean isFocusable() { return node.focusable; }
    public boolean isFocused() { return node.focused; }
    public boolean isScrollable() { return node.scrollable; }
    public boolean isLongClickable() { return node.longClickable; }
    public boolean isPassword() { return node.password; }
    public boolean isSelected() { return node.selected; }
    public boolean isVisibleToUser() { return node.visibleToUser; }
    public int getChildCount() { return node.children.size(); }

    /** API 24. */
    public int getDrawingOrder() {
        requireLevel(24, "getDrawingOrder");
        return node.drawingOrder;
    }

    /** API 26. */
    public CharSequence getHintText() {
        requireLevel(26, "getHintText");
        return node.hint;
    }

    public void getBoundsInScreen(Rect out) {
        out.set(node.left, node.top, node.right, node.bottom);
    }

    public AccessibilityNodeInfo getChild(int index) {
        if (index < 0 || index >= node.children.size()) throw new IndexOutOfBoundsException("index " + index);
        return new AccessibilityNodeInfo(node.children.get(index));
    }

    public boolean performAction(int action) {
        return performAction(action, null);
    }

    public boolean performAction(int action, Bundle arguments) {
        FakeAccessibility.Node live = node.live();
        if (action == ACTION_SET_TEXT) {
            CharSequence text = arguments == null ? null : arguments.getCharSequence(ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE);
            FakeAccessibility.recordAction("ACTION_SET_TEXT(" + text + ") on " + live.className);
            if (!live.editable || !live.enabled) return false;
            live.text = text == null ? "" : text.toString();
            return true;
        }
        if (action == ACTION_CLICK) {
            FakeAccessibility.recordAction("ACTION_CLICK on " + live.className);
            return live.clickable && live.enabled;
        }
        FakeAccessibility.recordAction("action 0x" + Integer.toHexString(action) + " on " + live.className);
        return false;
    }

    public void recycle() {
        // nothing pooled in the fake
    }

    private static void requireLevel(int level, String method) {
        if (!Profile.current().atLeast(level)) {
            throw new NoSuchMethodError("AccessibilityNodeInfo." + method + " does not exist on API " + Profile.current().sdk);
        }
    }
}
