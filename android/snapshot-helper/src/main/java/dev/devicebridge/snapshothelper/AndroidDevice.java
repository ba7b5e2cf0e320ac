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

    private final Instrumentation instrumentation;
    private UiAutomation automation;

    AndroidDevice(Instrumentation instrumentation) {
        this.instrumentation = instrumentation;
    }

    private synchronized UiAutomation automation() {
        if (automation != null) return automation;
        UiAutomation ua = null;
        if (Build.VERSION.SDK_INT >= 24) {
            try {
                Method m = Instrumentation.class.getMethod("getUiAutomation", int.class);
                ua = (UiAutomation) m.invoke(instrumentation, FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES);
            } catch (Exception e) {
                ua = null;
            }
        }
        if (ua == null) ua = instrumentation.getUiAutomation();
        AccessibilityServiceInfo info = ua.getServiceInfo();
        if (info != null) {
            info.flags |= AccessibilityServiceInfo.FLAG_RETRIEVE_INTERACTIVE_WINDOWS
                    | AccessibilityServiceInfo.FLAG_INCLUDE_NOT_IMPORTANT_VIEWS
                    | AccessibilityServiceInfo.FLAG_REPORT_VIEW_IDS;
            ua.setServiceInfo(info);
        }
        automation = ua;
        return ua;
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
        AccessibilityNodeInfo active = ua.getRootInActiveWindow();
        if (active != null) roots.add(new WindowRoot(new AccessibilityNodeView(active), null));
        return new Acquisition(roots, Protocol.CAPTURE_ACTIVE_WINDOW, active != null);
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
            if (!automation().injectInputEvent(event, true)) {
                throw new IllegalStateException("Input event injection failed: action " + step.action);
            }
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
