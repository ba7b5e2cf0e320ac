/* Fake of frameworks/base/core/java/android/view/accessibility/AccessibilityWindowInfo.java @ android-14.0.0_r1 (API 21 surface). */
package android.view.accessibility;

import android.graphics.Rect;
import dev.devicebridge.fakes.FakeAccessibility;

public final class AccessibilityWindowInfo {
    public static final int TYPE_APPLICATION = 1;
    public static final int TYPE_INPUT_METHOD = 2;
    public static final int TYPE_SYSTEM = 3;
    public static final int TYPE_ACCESSIBILITY_OVERLAY = 4;

    private final FakeAccessibility.Window window;

    /** Fake-only. */
    public AccessibilityWindowInfo(FakeAccessibility.Window window) {
        this.window = window;
    }

    public int getType() { return window.type; }
    public int getLayer() { return window.layer; }
    public boolean isActive() { return window.active; }
    public boolean isFocused() { return window.focused; }

    public void getBoundsInScreen(Rect out) {
        out.set(window.bounds[0], window.bounds[1], window.bounds[2], window.bounds[3]);
    }

    public AccessibilityNodeInfo getRoot() {
        return window.rootPending || window.root == null ? null : new AccessibilityNodeInfo(window.root);
    }

    public void recycle() {
        // nothing pooled in the fake
    }
}
