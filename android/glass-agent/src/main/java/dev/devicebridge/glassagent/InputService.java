package dev.devicebridge.glassagent;

import android.view.InputEvent;
import java.lang.reflect.Method;

/** The hidden InputManager.injectInputEvent (available to the shell uid), through reflection. */
final class InputService {
    /** InputManager.INJECT_INPUT_EVENT_MODE_WAIT_FOR_FINISH. */
    private static final int WAIT_FOR_FINISH = 2;

    private Object manager;
    private Method inject;

    private synchronized void bind() throws Exception {
        if (inject != null) return;
        Class<?> cls = Class.forName("android.hardware.input.InputManager");
        Method getInstance;
        try {
            getInstance = cls.getDeclaredMethod("getInstance");
        } catch (NoSuchMethodException e) {
            // API 35+: InputManagerGlobal holds the injector.
            cls = Class.forName("android.hardware.input.InputManagerGlobal");
            getInstance = cls.getDeclaredMethod("getInstance");
        }
        manager = getInstance.invoke(null);
        inject = cls.getMethod("injectInputEvent", InputEvent.class, int.class);
    }

    void inject(InputEvent event) throws Exception {
        bind();
        Object ok = inject.invoke(manager, event, WAIT_FOR_FINISH);
        if (ok instanceof Boolean && !((Boolean) ok)) throw new IllegalStateException("input event injection refused");
    }
}
