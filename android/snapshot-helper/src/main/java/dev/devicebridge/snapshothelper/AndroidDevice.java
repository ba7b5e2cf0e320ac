package dev.devicebridge.snapshothelper;

import android.accessibilityservice.AccessibilityServiceInfo;
import android.app.Instrumentation;
import android.app.UiAutomation;
import android.content.Context;
import android.os.Build;
import android.os.SystemClock;
import android.view.InputDevice;
import android.view.MotionEvent;
import android.view.WindowManager;
import android.view.accessibility.AccessibilityNodeInfo;
import android.view.accessibility.AccessibilityWindowInfo;
import dev.devicebridge.snapshothelper.core.Clock;
import dev.devicebridge.snapshothelper.core.Injector;
import dev.devicebridge.snapshothelper.core.MotionSchedule;
import dev.devicebridge.snapshothelper.core.Protocol;
import dev.devicebridge.snapshothelper.core.Rect;
import dev.devicebridge.snapshothelper.core.UiSource;
import dev.devicebridge.snapshothelper.core.WindowInfo;
import dev.devicebridge.snapshothelper.core.WindowRoot;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

/**
 * The device side of the helper: UiAutomation (with the interactive-windows flag), windows and
 * their roots, rotation, motion-event injection and the uptime clock. API 24+ calls go through
 * reflection so the APK compiles against API 23.
 */
final class AndroidDevice implements UiSource, Injector, Clock {
    /** UiAutomation.FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES (API 24). */
    private static final int FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES = 1;

    /** How long the first connection waits for getWindows() to list windows after enabling the flag. */
    static final long WINDOWS_APPEAR_BOUND_MS = 500;
    static final long WINDOWS_POLL_MS = 50;

    private final Instrumentation instrumentation;
    private UiAutomation automation;
    /** Whether a read has gone through this connection (its cache may be stale from then on). */
    private boolean acquired;

    AndroidDevice(Instrumentation instrumentation) {
        this.instrumentation = instrumentation;
    }

    private synchronized UiAutomation automation() {
        if (automation != null) return automation;
        UiAutomation ua = null;
        if (Build.VERSION.SDK_INT >= 24) {
            Method m;
            try {
                m = Instrumentation.class.getMethod("getUiAutomation", int.class);
            } catch (NoSuchMethodException e) {
                m = null;
            }
            if (m != null) {
                try {
                    ua = (UiAutomation) AndroidApi.invoke("Instrumentation.getUiAutomation(FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES)",
                            m, instrumentation, FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES);
                } catch (RuntimeException e) {
                    throw withHint(e);
                }
            }
        }
        if (ua == null) {
            try {
                ua = instrumentation.getUiAutomation();
            } catch (RuntimeException e) {
                throw withHint(AndroidApi.failed("Instrumentation.getUiAutomation", e));
            }
            if (ua == null) throw AndroidApi.refused("Instrumentation.getUiAutomation", "returned null");
        }
        boolean interactiveWindows;
        try {
            AccessibilityServiceInfo info = ua.getServiceInfo();
            interactiveWindows = info != null;
            if (info != null) {
                info.flags |= AccessibilityServiceInfo.FLAG_RETRIEVE_INTERACTIVE_WINDOWS
                        | AccessibilityServiceInfo.FLAG_INCLUDE_NOT_IMPORTANT_VIEWS
                        | AccessibilityServiceInfo.FLAG_REPORT_VIEW_IDS;
                ua.setServiceInfo(info);
            }
        } catch (RuntimeException e) {
            throw AndroidApi.failed("UiAutomation.setServiceInfo", e);
        }
        automation = ua;
        if (interactiveWindows) awaitWindows(ua);
        return ua;
    }

    /** The system allows one UiAutomation client: say who may be holding it. */
    private static RuntimeException withHint(RuntimeException e) {
        String message = e.getMessage();
        if (message == null || !message.contains("already registered")) return e;
        return AndroidApi.withMessage(e, message + " (another UiAutomation client holds the connection: uiautomator dump,"
                + " Appium's UiAutomator2 server, or a snapshot-helper session that was not quit)");
    }

    /**
     * The interactive-windows flag takes effect asynchronously: getWindows() right after
     * setServiceInfo can still be empty. Wait (bounded) for the windows to appear, as uiautomator
     * and Appium do; if they do not, {@link #acquire} reports the active-window fallback as
     * incomplete and the root acquirer keeps retrying within its own bound.
     */
    private static void awaitWindows(UiAutomation ua) {
        long deadline = SystemClock.uptimeMillis() + WINDOWS_APPEAR_BOUND_MS;
        while (true) {
            List<AccessibilityWindowInfo> windows;
            try {
                windows = ua.getWindows();
            } catch (RuntimeException e) {
                return;
            }
            if (windows != null && !windows.isEmpty()) return;
            long left = deadline - SystemClock.uptimeMillis();
            if (left <= 0) return;
            try {
                Thread.sleep(Math.min(WINDOWS_POLL_MS, left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * A long-lived connection reads nodes through the AccessibilityInteractionClient cache, which
     * goes stale when events are missed. Clear it before every read after the first, as Appium
     * does: UiAutomation.clearCache() on API 34+, else (or when it answers false) re-apply the
     * service info, whose setServiceInfo clears the cache on every release.
     */
    private void clearCache(UiAutomation ua) {
        if (Build.VERSION.SDK_INT >= 34) {
            try {
                Object cleared = AndroidApi.invoke("UiAutomation.clearCache", UiAutomation.class.getMethod("clearCache"), ua);
                if (Boolean.TRUE.equals(cleared)) return;
            } catch (Exception e) {
                // fall back to the legacy way
            }
        }
        try {
            AccessibilityServiceInfo info = ua.getServiceInfo();
            if (info != null) ua.setServiceInfo(info);
        } catch (RuntimeException e) {
            throw AndroidApi.failed("UiAutomation.setServiceInfo", e);
        }
    }

    /**
     * Gives the UiAutomation connection back (the system allows one at a time: {@code uiautomator
     * dump} and Appium cannot connect while a session holds it). API 24+: destroy() (hidden, a
     * test API), after which Instrumentation.finish leaves it alone. Below 24 there is no destroy
     * and finish() disconnects whatever it still holds, throwing if it is already disconnected:
     * disconnect() and clear Instrumentation.mUiAutomation together, or neither (finish releases it).
     * Best effort: finish() releases it anyway, only later.
     */
    synchronized void release() {
        UiAutomation ua = automation;
        if (ua == null) return;
        try {
            if (Build.VERSION.SDK_INT >= 24) {
                UiAutomation.class.getMethod("destroy").invoke(ua);
            } else {
                Field held = Instrumentation.class.getDeclaredField("mUiAutomation");
                held.setAccessible(true);
                UiAutomation.class.getMethod("disconnect").invoke(ua);
                held.set(instrumentation, null);
            }
            automation = null;
        } catch (Exception e) {
            // Left to Instrumentation.finish.
        } catch (LinkageError e) {
            // Left to Instrumentation.finish.
        }
    }

    @Override
    public void waitForIdle(long quietMs, long timeoutMs) {
        try {
            automation().waitForIdle(quietMs, timeoutMs);
        } catch (TimeoutException e) {
            // waitForIdleTimeoutMs is a maximum, not a requirement: capture what is there.
        }
    }

    @Override
    public Acquisition acquire() {
        UiAutomation ua = automation();
        synchronized (this) {
            if (acquired) clearCache(ua);
            acquired = true;
        }
        List<WindowRoot> roots = new ArrayList<WindowRoot>();
        boolean complete = true;
        List<AccessibilityWindowInfo> windows;
        try {
            windows = ua.getWindows();
        } catch (RuntimeException e) {
            windows = null;
        }
        if (windows != null && !windows.isEmpty()) {
            for (int i = 0; i < windows.size(); i++) {
                AccessibilityWindowInfo w = windows.get(i);
                AccessibilityNodeInfo root = w.getRoot();
                if (root == null) {
                    if (w.isActive() || w.isFocused()) complete = false;
                    continue;
                }
                android.graphics.Rect b = new android.graphics.Rect();
                w.getBoundsInScreen(b);
                WindowInfo info = new WindowInfo(i, w.getType(), w.getLayer(), w.isActive(), w.isFocused(),
                        new Rect(b.left, b.top, b.right, b.bottom));
                roots.add(new WindowRoot(new AccessibilityNodeView(root), info));
            }
            if (!roots.isEmpty()) return new Acquisition(roots, Protocol.CAPTURE_INTERACTIVE_WINDOWS, complete);
        }
        // No interactive windows although the flag is on: they have not appeared yet (or every
        // root is missing). The active window alone is a fallback, never a complete capture.
        AccessibilityNodeInfo active;
        try {
            active = ua.getRootInActiveWindow();
        } catch (RuntimeException e) {
            throw AndroidApi.failed("UiAutomation.getRootInActiveWindow", e);
        }
        if (active != null) roots.add(new WindowRoot(new AccessibilityNodeView(active), null));
        return new Acquisition(roots, Protocol.CAPTURE_ACTIVE_WINDOW, false);
    }

    @Override
    public int rotation() {
        WindowManager wm = (WindowManager) instrumentation.getContext().getSystemService(Context.WINDOW_SERVICE);
        return wm == null ? 0 : wm.getDefaultDisplay().getRotation();
    }

    @Override
    public void inject(MotionSchedule.Step step, long downTime, long eventTime) {
        int n = step.pointerCount();
        MotionEvent.PointerProperties[] props = new MotionEvent.PointerProperties[n];
        MotionEvent.PointerCoords[] coords = new MotionEvent.PointerCoords[n];
        for (int i = 0; i < n; i++) {
            props[i] = new MotionEvent.PointerProperties();
            props[i].id = step.pointerIds[i];
            props[i].toolType = MotionEvent.TOOL_TYPE_FINGER;
            coords[i] = new MotionEvent.PointerCoords();
            coords[i].x = (float) step.xs[i];
            coords[i].y = (float) step.ys[i];
            coords[i].pressure = 1f;
            coords[i].size = 1f;
        }
        MotionEvent event = MotionEvent.obtain(downTime, eventTime, step.action, n, props, coords,
                0, 0, 1f, 1f, 0, 0, InputDevice.SOURCE_TOUCHSCREEN, 0);
        try {
            boolean injected;
            try {
                injected = automation().injectInputEvent(event, true);
            } catch (RuntimeException e) {
                throw AndroidApi.failed("UiAutomation.injectInputEvent", e);
            }
            if (!injected) throw AndroidApi.refused("UiAutomation.injectInputEvent", "returned false for action " + step.action);
        } finally {
            event.recycle();
        }
    }

    @Override
    public long uptimeMillis() {
        return SystemClock.uptimeMillis();
    }

    @Override
    public void sleep(long ms) throws InterruptedException {
        Thread.sleep(ms);
    }
}
