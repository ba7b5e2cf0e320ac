/* Fake of frameworks/base/core/java/android/hardware/display/VirtualDisplay.java @ android-14.0.0_r1: release() ends the mirror (dev.devicebridge.fakes.FakeDisplays). */
package android.hardware.display;

import android.view.Surface;
import dev.devicebridge.fakes.FakeDisplays;

public final class VirtualDisplay {
    private final FakeDisplays.Mirror mirror;

    /** Hidden in AOSP; the fakes make one per mirror. */
    public VirtualDisplay(FakeDisplays.Mirror mirror) {
        this.mirror = mirror;
    }

    public Surface getSurface() {
        return mirror.surface;
    }

    public void release() {
        mirror.end();
    }
}
