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
            AcceptLoop.run(listener, JsonLineProtocol.HELLO, new AcceptLoop.Handlers() {
                @Override
                public LineServer.Handler forConnection() {
                    return new A11yProtocol(host);
                }
            });
        } catch (Exception e) {
            // The socket closed (onDestroy) or could not be bound: the service stops serving.
        }
    }

    @Override
    public void onDestroy() {
        try {
            if (listener != null) listener.close();
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

    @Override
    public Window activeWindow() {
        AccessibilityNodeInfo root = getRootInActiveWindow();
        if (root == null) return null;
        CharSequence pkg = root.getPackageName();
        return new Window(pkg == null || pkg.length() == 0 ? null : pkg.toString(), new NodeInfoView(root));
    }

    @Override
    public boolean perform(A11yNode node, String action, String text) {
        AccessibilityNodeInfo info = ((NodeInfoView) node).info;
        if ("set_text".equals(action)) {
            Bundle args = new Bundle();
            args.putCharSequence(AccessibilityNodeInfo.ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE, text);
            return info.performAction(AccessibilityNodeInfo.ACTION_SET_TEXT, args);
        }
        return info.performAction(AccessibilityNodeInfo.ACTION_CLICK);
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
