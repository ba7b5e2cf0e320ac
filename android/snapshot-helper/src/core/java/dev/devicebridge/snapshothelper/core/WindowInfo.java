package dev.devicebridge.snapshothelper.core;

/** The window metadata written on a window root (AccessibilityWindowInfo facts). */
public final class WindowInfo {
    /** AccessibilityWindowInfo.TYPE_APPLICATION. */
    public static final int TYPE_APPLICATION = 1;

    public final int index;
    public final int type;
    public final int layer;
    public final boolean active;
    public final boolean focused;
    public final Rect bounds;

    public WindowInfo(int index, int type, int layer, boolean active, boolean focused, Rect bounds) {
        this.index = index;
        this.type = type;
        this.layer = layer;
        this.active = active;
        this.focused = focused;
        this.bounds = bounds;
    }
}
