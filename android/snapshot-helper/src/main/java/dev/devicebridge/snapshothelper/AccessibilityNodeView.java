package dev.devicebridge.snapshothelper;

import android.os.Build;
import android.view.accessibility.AccessibilityNodeInfo;
import dev.devicebridge.snapshothelper.core.NodeView;
import dev.devicebridge.snapshothelper.core.Rect;
import java.lang.reflect.Method;

/** {@link NodeView} over an AccessibilityNodeInfo; API 24+/26+ getters through reflection. */
final class AccessibilityNodeView implements NodeView {
    private static final Method GET_DRAWING_ORDER = method("getDrawingOrder", 24);
    private static final Method GET_HINT_TEXT = method("getHintText", 26);

    private final AccessibilityNodeInfo node;

    AccessibilityNodeView(AccessibilityNodeInfo node) {
        this.node = node;
    }

    private static Method method(String name, int minSdk) {
        if (Build.VERSION.SDK_INT < minSdk) return null;
        try {
            return AccessibilityNodeInfo.class.getMethod(name);
        } catch (Exception e) {
            return null;
        }
    }

    private static String str(CharSequence s) {
        return s == null ? null : s.toString();
    }

    @Override public String className() { return str(node.getClassName()); }
    @Override public String packageName() { return str(node.getPackageName()); }
    @Override public String text() { return str(node.getText()); }
    @Override public String resourceId() { return node.getViewIdResourceName(); }
    @Override public String contentDesc() { return str(node.getContentDescription()); }
    @Override public boolean checkable() { return node.isCheckable(); }
    @Override public boolean checked() { return node.isChecked(); }
    @Override public boolean clickable() { return node.isClickable(); }
    @Override public boolean enabled() { return node.isEnabled(); }
    @Override public boolean focusable() { return node.isFocusable(); }
    @Override public boolean focused() { return node.isFocused(); }
    @Override public boolean scrollable() { return node.isScrollable(); }
    @Override public boolean longClickable() { return node.isLongClickable(); }
    @Override public boolean password() { return node.isPassword(); }
    @Override public boolean selected() { return node.isSelected(); }
    @Override public boolean visibleToUser() { return node.isVisibleToUser(); }
    @Override public int childCount() { return node.getChildCount(); }

    @Override
    public String hint() {
        if (GET_HINT_TEXT == null) return null;
        try {
            return str((CharSequence) GET_HINT_TEXT.invoke(node));
        } catch (Exception e) {
            return null;
        }
    }

    @Override
    public int drawingOrder() {
        if (GET_DRAWING_ORDER == null) return NO_DRAWING_ORDER;
        try {
            return (Integer) GET_DRAWING_ORDER.invoke(node);
        } catch (Exception e) {
            return NO_DRAWING_ORDER;
        }
    }

    @Override
    public Rect bounds() {
        android.graphics.Rect b = new android.graphics.Rect();
        node.getBoundsInScreen(b);
        return new Rect(b.left, b.top, b.right, b.bottom);
    }

    @Override
    public NodeView child(int index) {
        AccessibilityNodeInfo child = node.getChild(index);
        return child == null ? null : new AccessibilityNodeView(child);
    }
}
