package dev.devicebridge.glassa11y;

import android.accessibilityservice.AccessibilityService;
import android.os.Bundle;
import android.view.accessibility.AccessibilityEvent;
import android.view.accessibility.AccessibilityNodeInfo;
import dev.devicebridge.glass.common.AcceptLoop;
import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.glass.common.LineServer;
import dev.devicebridge.glass.common.LocalSocketListener;
import dev.devicebridge.glassa11y.core.A11yHost;
import dev.devicebridge.glassa11y.core.A11yNode;
import dev.devicebridge.glassa11y.core.A11yProtocol;

/**
 * The glass a11y service: once enabled in secure settings it listens on localabstract:glass-a11y
 * and serves one client at a time with {@link A11yProtocol} (a fresh protocol state per
 * connection: a tree served on one connection never answers another's action).
 */
public final class GlassAccessibilityService extends AccessibilityService implements A11yHost {
    public static final String SOCKET_NAME = "glass-a11y";

    private Thread server;
    private volatile LocalSocketListener listener;
    /** The connection being served, closed by onDestroy with the listener. */
    private volatile AcceptLoop.Connection current;
    private volatile boolean destroyed;

    @Override
    protected void onServiceConnected() {
        super.onServiceConnected();
        server = new Thread(new Runnable() {
            @Override
            public void run() {
                serve();
            }
        }, "glass-a11y");
        server.setDaemon(true);
        server.start();
    }

    private void serve() {
        final A11yHost host = this;
        try {
            listener = new LocalSocketListener(SOCKET_NAME);
            final LocalSocketListener accepting = listener;
            AcceptLoop.Listener tracked = new AcceptLoop.Listener() {
                @Override
                public AcceptLoop.Connection accept() throws java.io.IOException {
                    AcceptLoop.Connection c = accepting.accept();
                    current = c;
                    if (destroyed) c.close();
                    return c;
                }
            };
            if (destroyed) {
                accepting.close();
                return;
            }
            AcceptLoop.run(tracked, JsonLineProtocol.HELLO, new AcceptLoop.Handlers() {
                @Override
                public LineServer.Handler forConnection() {
                    return new A11yProtocol(host);
                }
            });
        } catch (Exception e) {
            // The socket closed (onDestroy) or could not be bound: the service stops serving.
        }
    }

    /** Stops serving: the socket name is released and the client being served is closed. */
    @Override
    public void onDestroy() {
        destroyed = true;
        try {
            if (listener != null) listener.close();
        } catch (Exception ignored) {
            // closing anyway
        }
        try {
            AcceptLoop.Connection c = current;
            if (c != null) c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
        if (server != null) server.interrupt();
        super.onDestroy();
    }

    @Override
    public void onAccessibilityEvent(AccessibilityEvent event) {
        // The tree is read on request; events are not needed.
    }

    @Override
    public void onInterrupt() {
        // Nothing to stop: requests are served on demand.
    }

    /**
     * The active window's root; getRootInActiveWindow() answers null while the screen is off, the
     * keyguard is up or no window has focus yet: a clear error (ping keeps answering).
     */
    @Override
    public Window activeWindow() {
        AccessibilityNodeInfo root;
        try {
            root = getRootInActiveWindow();
        } catch (RuntimeException e) {
            throw new IllegalStateException(api("AccessibilityService.getRootInActiveWindow") + ": " + JsonLineProtocol.describe(e), e);
        }
        if (root == null) {
            throw new IllegalStateException(api("AccessibilityService.getRootInActiveWindow")
                    + ": no active window (the screen is off, the keyguard is up, or no window has focus)");
        }
        CharSequence pkg = root.getPackageName();
        return new Window(pkg == null || pkg.length() == 0 ? null : pkg.toString(), new NodeInfoView(root));
    }

    /**
     * ACTION_SET_TEXT or ACTION_CLICK (the host taps coordinates for clicks itself; the service's
     * click stays ACTION_CLICK). A click on a node with empty bounds is refused: nothing on screen
     * could have been meant.
     */
    @Override
    public boolean perform(A11yNode node, String action, String text) {
        AccessibilityNodeInfo info = ((NodeInfoView) node).info;
        if (!"set_text".equals(action)) {
            android.graphics.Rect r = new android.graphics.Rect();
            info.getBoundsInScreen(r);
            if (r.isEmpty()) {
                throw new IllegalStateException("click refused: the node has empty bounds [" + r.left + "," + r.top + "]["
                        + r.right + "," + r.bottom + "] (not on screen)");
            }
        }
        try {
            if ("set_text".equals(action)) {
                Bundle args = new Bundle();
                args.putCharSequence(AccessibilityNodeInfo.ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE, text);
                return info.performAction(AccessibilityNodeInfo.ACTION_SET_TEXT, args);
            }
            return info.performAction(AccessibilityNodeInfo.ACTION_CLICK);
        } catch (RuntimeException e) {
            throw new IllegalStateException(api("AccessibilityNodeInfo.performAction") + ": " + JsonLineProtocol.describe(e), e);
        }
    }

    /** "API failed on API N" — every error the host sees names the failing API and the device's level. */
    private static String api(String name) {
        return name + " failed on API " + android.os.Build.VERSION.SDK_INT;
    }

    /** {@link A11yNode} over an AccessibilityNodeInfo. */
    static final class NodeInfoView implements A11yNode {
        final AccessibilityNodeInfo info;

        NodeInfoView(AccessibilityNodeInfo info) {
            this.info = info;
        }

        private static String str(CharSequence s) {
            return s == null ? null : s.toString();
        }

        @Override public String className() { return str(info.getClassName()); }
        @Override public String text() { return str(info.getText()); }
        @Override public String contentDesc() { return str(info.getContentDescription()); }
        @Override public boolean editable() { return info.isEditable(); }
        @Override public boolean clickable() { return info.isClickable(); }
        @Override public boolean enabled() { return info.isEnabled(); }
        @Override public boolean scrollable() { return info.isScrollable(); }
        @Override public int childCount() { return info.getChildCount(); }

        @Override
        public int[] bounds() {
            android.graphics.Rect r = new android.graphics.Rect();
            info.getBoundsInScreen(r);
            return new int[] {r.left, r.top, r.width(), r.height()};
        }

        @Override
        public A11yNode child(int index) {
            AccessibilityNodeInfo child = info.getChild(index);
            return child == null ? null : new NodeInfoView(child);
        }
    }
}
