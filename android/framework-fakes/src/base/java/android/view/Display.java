/* Fake of frameworks/base/core/java/android/view/Display.java @ android-14.0.0_r1: getRotation (Surface.ROTATION_*), from dev.devicebridge.fakes.FakeAccessibility. */
package android.view;

import dev.devicebridge.fakes.FakeAccessibility;

public final class Display {
    public static final int DEFAULT_DISPLAY = 0;

    Display() {}

    public int getRotation() {
        return FakeAccessibility.rotation();
    }

    public int getDisplayId() {
        return DEFAULT_DISPLAY;
    }
}
