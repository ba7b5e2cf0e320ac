package dev.devicebridge.glassa11y.core;

/** The service's view of the device: the active window, and actions on nodes. */
public interface A11yHost {
    /** The window the service would answer from now. */
    final class Window {
        /** Null when the platform cannot name the window's package. */
        public final String packageName;
        public final A11yNode root;

        public Window(String packageName, A11yNode root) {
            this.packageName = packageName;
            this.root = root;
        }
    }

    /** Null when there is no active window with a root. */
    Window activeWindow();

    /** ACTION_SET_TEXT (action "set_text", with text) or ACTION_CLICK ("click"); false when refused. */
    boolean perform(A11yNode node, String action, String text) throws Exception;
}
