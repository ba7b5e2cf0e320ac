/*
 * Fake of the hidden frameworks/base/core/java/android/hardware/display/DisplayManagerGlobal.java
 * @ android-14.0.0_r1: getInstance() and getDisplayInfo(displayId) (a fresh DisplayInfo from the
 * display manager service; null for a display that does not exist), from
 * dev.devicebridge.fakes.FakeDisplays.
 */
package android.hardware.display;

import android.view.DisplayInfo;
import dev.devicebridge.fakes.FakeDisplays;

public final class DisplayManagerGlobal {
    private static DisplayManagerGlobal instance;

    private DisplayManagerGlobal() {}

    public static synchronized DisplayManagerGlobal getInstance() {
        if (instance == null) instance = new DisplayManagerGlobal();
        return instance;
    }

    public DisplayInfo getDisplayInfo(int displayId) {
        return FakeDisplays.info(displayId);
    }
}
