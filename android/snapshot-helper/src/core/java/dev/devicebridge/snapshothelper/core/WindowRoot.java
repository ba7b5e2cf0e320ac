package dev.devicebridge.snapshothelper.core;

/** One captured window: its root node, and its window metadata (null for the active-window fallback). */
public final class WindowRoot {
    public final NodeView root;
    public final WindowInfo window;

    public WindowRoot(NodeView root, WindowInfo window) {
        this.root = root;
        this.window = window;
    }
}
