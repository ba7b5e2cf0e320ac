package dev.devicebridge.fakes;

import android.accessibilityservice.AccessibilityServiceInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The accessibility side of the fake device: the windows on screen and their node trees (the
 * "live" UI the apps would report), the AccessibilityInteractionClient cache a UiAutomation client
 * reads through, the single UiAutomation connection the system allows, the keyguard/screen state
 * an AccessibilityService sees, and the display rotation.
 *
 * <p>AOSP facts followed (frameworks/base @ android-14.0.0_r1 unless said):
 * <ul>
 *   <li>{@code AccessibilityManagerService}/{@code UiAutomationManager.registerUiTestAutomationServiceLocked}:
 *       one UiAutomation connection at a time; a second connect throws IllegalStateException
 *       "UiAutomationService ... already registered!" (what {@code uiautomator dump} and Appium
 *       hit while a helper session holds it).</li>
 *   <li>{@code getWindows()} answers an empty list unless FLAG_RETRIEVE_INTERACTIVE_WINDOWS is set,
 *       and the flag takes effect asynchronously after setServiceInfo (the service's window
 *       tracking starts on the system's handler): the first calls after enabling it may still be
 *       empty — {@link #setEmptyWindowCallsAfterFlag}.</li>
 *   <li>{@code AccessibilityInteractionClient} caches nodes per connection; a client that misses
 *       events keeps answering from it. {@code UiAutomation.setServiceInfo} clears it (every
 *       release), {@code UiAutomation.clearCache()} (API 34) clears it explicitly (Appium
 *       uiautomator2-server {@code AXWindowHelpers.clearAccessibilityCache}).</li>
 * </ul>
 */
public final class FakeAccessibility {
    private FakeAccessibility() {}

    static {
        FakeDevice.onReset(new Runnable() {
            @Override
            public void run() {
                reset();
            }
        });
    }

    /** One node of the live UI. Tests build trees of these; the framework fakes read them. */
    public static final class Node {
        public String className = "android.view.View";
        public String packageName = "com.example.app";
        public String text;
        public String contentDesc;
        public String hint;
        public String viewId;
        public int left;
        public int top;
        public int right;
        public int bottom;
        public boolean clickable;
        public boolean enabled = true;
        public boolean editable;
        public boolean focusable;
        public boolean focused;
        public boolean scrollable;
        public boolean checkable;
        public boolean checked;
        public boolean longClickable;
        public boolean password;
        public boolean selected;
        public boolean visibleToUser = true;
        public int drawingOrder;
        public final List<Node> children = new ArrayList<Node>();
        /** The live node this one is a cached copy of (itself when live). */
        Node origin = this;

        public Node(String className, String text, int left, int top, int right, int bottom) {
            this.className = className;
            this.text = text;
            this.left = left;
            this.top = top;
            this.right = right;
            this.bottom = bottom;
        }

        public Node add(Node child) {
            children.add(child);
            return this;
        }

        /** A deep copy whose nodes remember their live origins (what the cache holds). */
        public Node snapshot() {
            Node c = new Node(className, text, left, top, right, bottom);
            c.packageName = packageName;
            c.contentDesc = contentDesc;
            c.hint = hint;
            c.viewId = viewId;
            c.clickable = clickable;
            c.enabled = enabled;
            c.editable = editable;
            c.focusable = focusable;
            c.focused = focused;
            c.scrollable = scrollable;
            c.checkable = checkable;
            c.checked = checked;
            c.longClickable = longClickable;
            c.password = password;
            c.selected = selected;
            c.visibleToUser = visibleToUser;
            c.drawingOrder = drawingOrder;
            c.origin = origin;
            for (Node child : children) c.children.add(child.snapshot());
            return c;
        }

        /** The live node behind this (cached) one. */
        public Node live() {
            return origin;
        }
    }

    /** One window on screen (AccessibilityWindowInfo's facts). */
    public static final class Window {
        /** AccessibilityWindowInfo.TYPE_* */
        public final int type;
        public final int layer;
        public final boolean active;
        public final boolean focused;
        public final int[] bounds;
        public final Node root;
        /** The window is listed but its root is not available yet (getRoot() answers null). */
        public boolean rootPending;

        public Window(int type, int layer, boolean active, boolean focused, int[] bounds, Node root) {
            this.type = type;
            this.layer = layer;
            this.active = active;
            this.focused = focused;
            this.bounds = bounds;
            this.root = root;
        }

        Window cached() {
            Window w = new Window(type, layer, active, focused, bounds, root == null ? null : root.snapshot());
            w.rootPending = rootPending;
            return w;
        }
    }

    private static final List<Window> LIVE = new ArrayList<Window>();
    private static List<Window> cache;
    private static int emptyWindowCallsAfterFlag;
    private static int pendingEmptyCalls;
    private static boolean keyguardOrScreenOff;
    private static int rotation;
    private static Object uiAutomationOwner;
    private static final List<String> CALLS = new ArrayList<String>();
    private static final List<String> ACTIONS = new ArrayList<String>();

    static {
        reset();
    }

    static synchronized void reset() {
        LIVE.clear();
        cache = null;
        emptyWindowCallsAfterFlag = 2;
        pendingEmptyCalls = 0;
        keyguardOrScreenOff = false;
        rotation = 0;
        uiAutomationOwner = null;
        CALLS.clear();
        ACTIONS.clear();
    }

    // ---- set-up ---------------------------------------------------------------------------------

    /** The windows on screen, topmost first (getWindows order). */
    public static synchronized void setWindows(Window... windows) {
        LIVE.clear();
        Collections.addAll(LIVE, windows);
    }

    /** How many getWindows() calls after the interactive-windows flag is enabled still answer [] (default 2). */
    public static synchronized void setEmptyWindowCallsAfterFlag(int calls) {
        emptyWindowCallsAfterFlag = calls;
    }

    /** The screen is off or the keyguard is up: getRootInActiveWindow() answers null. */
    public static synchronized void setScreenOffOrLocked(boolean value) {
        keyguardOrScreenOff = value;
    }

    public static synchronized void setRotation(int value) {
        rotation = value;
    }

    // ---- inspection -----------------------------------------------------------------------------

    /** Framework calls the fakes saw, e.g. "getUiAutomation(1)", "setServiceInfo(flags=0x52)", "clearCache()". */
    public static synchronized List<String> calls() {
        return new ArrayList<String>(CALLS);
    }

    /** Actions performed on nodes, e.g. "ACTION_SET_TEXT(hello) on android.widget.EditText". */
    public static synchronized List<String> actions() {
        return new ArrayList<String>(ACTIONS);
    }

    /** Whether some UiAutomation holds the connection now. */
    public static synchronized boolean uiAutomationConnected() {
        return uiAutomationOwner != null;
    }

    /** What {@code uiautomator dump} does first: connect a UiAutomation. Throws while another holds it. */
    public static synchronized void anotherClientConnects() {
        Object other = new Object();
        connectUiAutomation(other);
        disconnectUiAutomation(other);
    }

    // ---- for the framework fakes ----------------------------------------------------------------

    public static synchronized void record(String call) {
        CALLS.add(call);
    }

    public static synchronized void recordAction(String action) {
        ACTIONS.add(action);
    }

    public static synchronized int rotation() {
        return rotation;
    }

    public static synchronized void connectUiAutomation(Object client) {
        if (uiAutomationOwner != null && uiAutomationOwner != client) {
            throw new IllegalStateException("UiAutomationService " + client + "already registered!");
        }
        uiAutomationOwner = client;
    }

    public static synchronized void disconnectUiAutomation(Object client) {
        if (uiAutomationOwner == client) uiAutomationOwner = null;
    }

    /** setServiceInfo: clears the client's cache; newly enabling interactive windows starts the delay. */
    public static synchronized void serviceInfoSet(int oldFlags, int newFlags) {
        CALLS.add("setServiceInfo(flags=0x" + Integer.toHexString(newFlags) + ")");
        cache = null;
        int flag = AccessibilityServiceInfo.FLAG_RETRIEVE_INTERACTIVE_WINDOWS;
        if ((newFlags & flag) != 0 && (oldFlags & flag) == 0) pendingEmptyCalls = emptyWindowCallsAfterFlag;
    }

    public static synchronized void cacheCleared() {
        CALLS.add("clearCache()");
        cache = null;
    }

    /** The windows as a UiAutomation client reads them: through the cache. */
    public static synchronized List<Window> windowsForClient(int flags) {
        if ((flags & AccessibilityServiceInfo.FLAG_RETRIEVE_INTERACTIVE_WINDOWS) == 0) return new ArrayList<Window>();
        if (pendingEmptyCalls > 0) {
            pendingEmptyCalls--;
            return new ArrayList<Window>();
        }
        return new ArrayList<Window>(cached());
    }

    /** The active window's root as a UiAutomation client reads it (through the cache), or null. */
    public static synchronized Node activeRootForClient() {
        if (keyguardOrScreenOff) return null;
        for (Window w : cached()) {
            if (w.active) return w.rootPending ? null : w.root;
        }
        return null;
    }

    /** The active window's root as an AccessibilityService reads it (its cache follows events: fresh). */
    public static synchronized Node activeRootForService() {
        if (keyguardOrScreenOff) return null;
        for (Window w : LIVE) {
            if (w.active) return w.rootPending || w.root == null ? null : w.root.snapshot();
        }
        return null;
    }

    private static List<Window> cached() {
        if (cache == null) {
            cache = new ArrayList<Window>();
            for (Window w : LIVE) cache.add(w.cached());
        }
        return cache;
    }
}
