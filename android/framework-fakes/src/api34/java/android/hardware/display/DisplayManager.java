/*
 * Fake of frameworks/base/core/java/android/hardware/display/DisplayManager.java from API 34
 * (android-14.0.0_r1): the hidden @SystemApi static createVirtualDisplay(name, width, height,
 * displayIdToMirror, surface), which builds a VirtualDisplayConfig with
 * VIRTUAL_DISPLAY_FLAG_AUTO_MIRROR and setDisplayIdToMirror and asks the display manager service as
 * the calling uid's package (the shell's, for app_process). Replaces the base class for profiles >= 34.
 */
package android.hardware.display;

import android.view.Surface;
import dev.devicebridge.fakes.FakeDisplays;

public final class DisplayManager {
    public static final int VIRTUAL_DISPLAY_FLAG_AUTO_MIRROR = 16;

    private DisplayManager() {}

    public static VirtualDisplay createVirtualDisplay(String name, int width, int height, int displayIdToMirror, Surface surface) {
        return FakeDisplays.createVirtualDisplay(name, width, height, displayIdToMirror, surface);
    }
}
