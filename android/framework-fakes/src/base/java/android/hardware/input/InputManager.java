/*
 * Fake of frameworks/base/core/java/android/hardware/input/InputManager.java: hidden
 * getInstance() and injectInputEvent(InputEvent, int) (mode 0 async, 1 wait for result, 2 wait
 * for finish), per release:
 *
 *   android-6.0.1_r1 .. android-13.0.0_r1: getInstance() returns the process singleton.
 *   android-14.0.0_r1, android-15.0.0_r1:  getInstance() is
 *       Objects.requireNonNull(ActivityThread.currentApplication()).getSystemService(InputManager.class)
 *     so in app_process (no Application) it throws NullPointerException; injectInputEvent
 *     delegates to InputManagerGlobal (overlay api34).
 *
 * Permission and validation rules are FakeDevice.Input.inject's.
 */
package android.hardware.input;

import android.app.ActivityThread;
import android.view.InputEvent;
import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.Profile;

public final class InputManager {
    private static InputManager instance;

    private InputManager() {}

    public static InputManager getInstance() {
        if (Profile.current().atLeast(34)) {
            android.app.Application app = ActivityThread.currentApplication();
            if (app == null) throw new NullPointerException();
            return app.getSystemService(InputManager.class);
        }
        return fromContext();
    }

    /** What a Context's getSystemService(INPUT_SERVICE) answers. */
    public static synchronized InputManager fromContext() {
        if (instance == null) instance = new InputManager();
        return instance;
    }

    public boolean injectInputEvent(InputEvent event, int mode) {
        return FakeDevice.Input.inject(event, mode);
    }
}
