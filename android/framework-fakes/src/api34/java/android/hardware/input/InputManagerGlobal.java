/*
 * Fake of frameworks/base/core/java/android/hardware/input/InputManagerGlobal.java
 * @ android-14.0.0_r1 (hidden, API 34+; overlay api34): a process-wide singleton from
 * getInstance() that needs no Context, holding injectInputEvent(InputEvent, int) since
 * InputManager's own getInstance() went through ActivityThread.currentApplication().
 */
package android.hardware.input;

import android.view.InputEvent;
import dev.devicebridge.fakes.FakeDevice;

public final class InputManagerGlobal {
    private static InputManagerGlobal instance;

    private InputManagerGlobal() {}

    public static synchronized InputManagerGlobal getInstance() {
        if (instance == null) instance = new InputManagerGlobal();
        return instance;
    }

    public boolean injectInputEvent(InputEvent event, int mode) {
        return FakeDevice.Input.inject(event, mode);
    }
}
