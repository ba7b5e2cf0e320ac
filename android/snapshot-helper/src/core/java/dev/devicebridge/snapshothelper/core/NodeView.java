package dev.devicebridge.snapshothelper.core;

/**
 * What the XML writer reads from one accessibility node. On a device it wraps an
 * AccessibilityNodeInfo; on the JVM, fixture trees implement it.
 */
public interface NodeView {
    /** Value meaning "the platform cannot tell" for {@link #drawingOrder()} (API 23). */
    int NO_DRAWING_ORDER = Integer.MIN_VALUE;

    String className();

    String packageName();

    /** Null when the node has none. */
    String text();

    String resourceId();

    String contentDesc();

    /** Hint text (API 26+); null when absent, and then the attribute is omitted. */
    String hint();

    boolean checkable();

    boolean checked();

    boolean clickable();

    boolean enabled();

    boolean focusable();

    boolean focused();

    boolean scrollable();

    boolean longClickable();

    boolean password();

    boolean selected();

    boolean visibleToUser();

    /** Drawing order (API 24+), or {@link #NO_DRAWING_ORDER}. */
    int drawingOrder();

    /** Bounds in screen coordinates: left, top, right, bottom. */
    Rect bounds();

    int childCount();

    /** The i-th child, or null when the platform no longer has it. */
    NodeView child(int index);
}
