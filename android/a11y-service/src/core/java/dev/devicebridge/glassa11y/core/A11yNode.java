package dev.devicebridge.glassa11y.core;

/** What the tree serializer and actions need of an accessibility node. */
public interface A11yNode {
    String className();

    /** Null or empty: the field is omitted. */
    String text();

    String contentDesc();

    /** Bounds in screen coordinates: x, y, width, height. */
    int[] bounds();

    boolean editable();

    boolean clickable();

    boolean enabled();

    boolean scrollable();

    int childCount();

    /** Null when the platform no longer has the child (it is skipped). */
    A11yNode child(int index);
}
