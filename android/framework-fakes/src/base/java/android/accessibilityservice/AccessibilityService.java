/*
 * Fake of frameworks/base/core/java/android/accessibilityservice/AccessibilityService.java
 * @ android-14.0.0_r1 (Service and ContextWrapper folded in): the life-cycle callbacks the system
 * calls (onServiceConnected, onDestroy) and getRootInActiveWindow, which answers null while the
 * screen is off or the keyguard is up (dev.devicebridge.fakes.FakeAccessibility), as on a device.
 */
package android.accessibilityservice;

import android.content.ContextWrapper;
import android.view.accessibility.AccessibilityEvent;
import android.view.accessibility.AccessibilityNodeInfo;
import dev.devicebridge.fakes.FakeAccessibility;

public abstract class AccessibilityService extends ContextWrapper {
    public AccessibilityService() {
        super(null);
    }

    public abstract void onAccessibilityEvent(AccessibilityEvent event);

    public abstract void onInterrupt();

    protected void onServiceConnected() {}

    public void onCreate() {}

    public void onDestroy() {}

    public AccessibilityNodeInfo getRootInActiveWindow() {
        FakeAccessibility.Node root = FakeAccessibility.activeRootForService();
        return root == null ? null : new AccessibilityNodeInfo(root);
    }
}
