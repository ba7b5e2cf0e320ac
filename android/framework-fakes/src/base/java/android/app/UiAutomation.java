/*
 * Fake of frameworks/base/core/java/android/app/UiAutomation.java, per release:
 * - connect()/disconnect() (hidden since API 18): one connection system-wide
 *   (dev.devicebridge.fakes.FakeAccessibility), free once the disconnect binder call (20 ms here)
 *   returns; disconnect() on an unconnected instance throws
 *   IllegalStateException "UiAutomation not connected!" (throwIfNotConnectedLocked).
 * - destroy()/isDestroyed() (hidden, @TestApi) exist from API 24 (android-7.0.0_r1); below, the fake
 *   throws NoSuchMethodError as the missing method would.
 * - setServiceInfo clears the AccessibilityInteractionClient cache before passing the info on
 *   (every release; Appium's legacy cache clear relies on it).
 * - clearCache() is public from API 34 (android-14.0.0_r1; Appium uiautomator2-server calls it
 *   there, #734); NoSuchMethodError below.
 * - getWindows(): empty without FLAG_RETRIEVE_INTERACTIVE_WINDOWS, and for the first calls after
 *   enabling it (FakeAccessibility.setEmptyWindowCallsAfterFlag).
 * - injectInputEvent goes to the input dispatcher (dev.devicebridge.fakes.FakeDevice.Input), which
 *   refuses shell injection on MIUI/ColorOS with the security switch off.
 */
package android.app;

import android.accessibilityservice.AccessibilityServiceInfo;
import android.view.InputEvent;
import android.view.accessibility.AccessibilityNodeInfo;
import android.view.accessibility.AccessibilityWindowInfo;
import dev.devicebridge.fakes.FakeAccessibility;
import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.Profile;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

public final class UiAutomation {
    public static final int FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES = 0x00000001;

    /** How long the fake's disconnect binder call takes. */
    private static final long DISCONNECT_CALL_MS = 20;

    private final AccessibilityServiceInfo info = new AccessibilityServiceInfo();
    private boolean connected;
    private boolean destroyed;
    private int flags;

    UiAutomation() {
        info.flags = AccessibilityServiceInfo.DEFAULT;
    }

    /** Hidden. */
    public void connect(int connectFlags) {
        synchronized (this) {
            if (connected) throw new IllegalStateException("UiAutomation already connected!");
        }
        FakeAccessibility.connectUiAutomation(this);
        synchronized (this) {
            connected = true;
            flags = connectFlags;
        }
    }

    /** Hidden. */
    public void disconnect() {
        synchronized (this) {
            throwIfNotConnected();
            connected = false;
        }
        FakeAccessibility.record("disconnect()");
        // IUiAutomationConnection.disconnect is a binder call into system_server that unregisters
        // the service there; the connection is free when it returns, not before.
        try {
            Thread.sleep(DISCONNECT_CALL_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        FakeAccessibility.disconnectUiAutomation(this);
    }

    /** Hidden, API 24. */
    public void destroy() {
        requireLevel(24, "destroy");
        FakeAccessibility.record("destroy()");
        disconnect();
        destroyed = true;
    }

    /** Hidden, API 24. */
    public boolean isDestroyed() {
        requireLevel(24, "isDestroyed");
        return destroyed;
    }

    /** Hidden. */
    public int getFlags() {
        return flags;
    }

    /** Fake-only: connected now. */
    public synchronized boolean fakeConnected() {
        return connected;
    }

    public AccessibilityServiceInfo getServiceInfo() {
        synchronized (this) {
            throwIfNotConnected();
            return info.copy();
        }
    }

    public void setServiceInfo(AccessibilityServiceInfo newInfo) {
        int old;
        synchronized (this) {
            throwIfNotConnected();
            old = info.flags;
            info.flags = newInfo.flags;
        }
        FakeAccessibility.serviceInfoSet(old, newInfo.flags);
    }

    /** API 34. */
    public boolean clearCache() {
        requireLevel(34, "clearCache");
        synchronized (this) {
            throwIfNotConnected();
        }
        FakeAccessibility.cacheCleared();
        return true;
    }

    public List<AccessibilityWindowInfo> getWindows() {
        int f;
        synchronized (this) {
            throwIfNotConnected();
            f = info.flags;
        }
        List<AccessibilityWindowInfo> out = new ArrayList<AccessibilityWindowInfo>();
        for (FakeAccessibility.Window w : FakeAccessibility.windowsForClient(f)) out.add(new AccessibilityWindowInfo(w));
        return out;
    }

    public AccessibilityNodeInfo getRootInActiveWindow() {
        synchronized (this) {
            throwIfNotConnected();
        }
        FakeAccessibility.Node root = FakeAccessibility.activeRootForClient();
        return root == null ? null : new AccessibilityNodeInfo(root);
    }

    public void waitForIdle(long idleTimeoutMillis, long globalTimeoutMillis) throws TimeoutException {
        synchronized (this) {
            throwIfNotConnected();
        }
    }

    public boolean injectInputEvent(InputEvent event, boolean sync) {
        synchronized (this) {
            throwIfNotConnected();
        }
        // UiAutomationConnection.injectInputEvent: INJECT_INPUT_EVENT_MODE_WAIT_FOR_FINISH (2) when sync.
        return FakeDevice.Input.inject(event, sync ? 2 : 0);
    }

    private void throwIfNotConnected() {
        if (!connected) throw new IllegalStateException("UiAutomation not connected!");
    }

    private static void requireLevel(int level, String method) {
        if (!Profile.current().atLeast(level)) {
            throw new NoSuchMethodError("UiAutomation." + method + " does not exist on API " + Profile.current().sdk);
        }
    }
}
