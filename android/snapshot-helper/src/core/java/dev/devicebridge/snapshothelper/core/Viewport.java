package dev.devicebridge.snapshothelper.core;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The interactive viewport: the bounds of the active application window. With window metadata, the
 * first application window (type 1) that is active or focused, else the first application window;
 * without it (active-window fallback), the first root that is neither system UI nor a keyboard,
 * else the first root. A window's own bounds win over its root node's; empty bounds never count.
 */
public final class Viewport {
    private static final Pattern NON_APP_PACKAGE =
            Pattern.compile("^com\\.android\\.systemui$|inputmethod|keyboard", Pattern.CASE_INSENSITIVE);

    private Viewport() {}

    /** @throws IllegalStateException when no window has usable bounds */
    public static Rect of(List<WindowRoot> roots) {
        boolean typed = false;
        for (WindowRoot r : roots) typed |= r.window != null;
        if (typed) {
            for (WindowRoot r : roots) {
                if (r.window != null && r.window.type == WindowInfo.TYPE_APPLICATION && (r.window.active || r.window.focused)) {
                    Rect b = bounds(r);
                    if (b != null) return b;
                }
            }
            for (WindowRoot r : roots) {
                if (r.window != null && r.window.type == WindowInfo.TYPE_APPLICATION) {
                    Rect b = bounds(r);
                    if (b != null) return b;
                }
            }
        }
        for (WindowRoot r : roots) {
            String pkg = r.root == null ? null : r.root.packageName();
            if (pkg != null && NON_APP_PACKAGE.matcher(pkg).find()) continue;
            Rect b = bounds(r);
            if (b != null) return b;
        }
        for (WindowRoot r : roots) {
            Rect b = bounds(r);
            if (b != null) return b;
        }
        throw new IllegalStateException("Active application interaction viewport is unavailable");
    }

    private static Rect bounds(WindowRoot r) {
        if (r.window != null && r.window.bounds != null && !r.window.bounds.isEmpty()) return r.window.bounds;
        if (r.root != null) {
            Rect b = r.root.bounds();
            if (b != null && !b.isEmpty()) return b;
        }
        return null;
    }

    public static Fields fields(Rect r) {
        return new Fields().put("ok", "true").put("kind", "viewport")
                .put("x", r.left).put("y", r.top).put("width", r.width()).put("height", r.height());
    }
}
