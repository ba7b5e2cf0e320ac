package dev.devicebridge.glassagent;

import android.os.Build;
import android.view.InputEvent;
import java.lang.reflect.Method;
import java.util.Locale;

/**
 * The hidden injectInputEvent(InputEvent, int) (available to the shell uid), through reflection.
 *
 * <p>Android 14 moved the injector to InputManagerGlobal, whose getInstance() needs no Context,
 * and made InputManager.getInstance() go through ActivityThread.currentApplication(), which is
 * null in app_process, so it throws. So InputManagerGlobal is looked up first (as scrcpy did) and
 * InputManager is used only where InputManagerGlobal does not exist (API 33 and below).
 */
final class InputService {
    /** InputManager.INJECT_INPUT_EVENT_MODE_WAIT_FOR_FINISH: returns once the app handled the event. */
    static final int WAIT_FOR_FINISH = 2;

    private String api;
    private Object manager;
    private Method inject;

    private synchronized void bind() throws AndroidApi.Failure {
        if (inject != null) return;
        Class<?> cls;
        String name;
        try {
            cls = Class.forName("android.hardware.input.InputManagerGlobal");
            name = "InputManagerGlobal";
        } catch (ClassNotFoundException e) {
            try {
                cls = Class.forName("android.hardware.input.InputManager");
            } catch (ClassNotFoundException impossible) {
                throw AndroidApi.failed("InputManager", impossible);
            }
            name = "InputManager";
        }
        Method getInstance;
        Method injectMethod;
        try {
            getInstance = cls.getDeclaredMethod("getInstance");
            injectMethod = cls.getMethod("injectInputEvent", InputEvent.class, int.class);
        } catch (NoSuchMethodException e) {
            throw AndroidApi.failed(name, e);
        }
        getInstance.setAccessible(true);
        Object instance = AndroidApi.invoke(name + ".getInstance", getInstance, null);
        if (instance == null) throw AndroidApi.failed(name + ".getInstance", new NullPointerException("returned null"));
        manager = instance;
        inject = injectMethod;
        api = name;
    }

    /** Injects {@code event} and waits until it was handled; throws when the system refuses it. */
    void inject(InputEvent event) throws AndroidApi.Failure {
        bind();
        Object ok;
        try {
            ok = AndroidApi.invoke(api + ".injectInputEvent", inject, manager, event, WAIT_FOR_FINISH);
        } catch (AndroidApi.Failure f) {
            String advice = injectionAdvice(f.getCause());
            if (advice == null) throw f;
            throw new AndroidApi.Failure(f.getMessage() + " — " + advice, f.getCause());
        }
        if (ok instanceof Boolean && !((Boolean) ok)) {
            throw new AndroidApi.Failure(api + ".injectInputEvent refused " + event + " on API " + Build.VERSION.SDK_INT, null);
        }
    }

    /**
     * What to switch on when the system refuses injection for want of INJECT_EVENTS: the shell
     * holds that permission on AOSP, so the refusal comes from an OEM security layer. Null for
     * any other failure.
     */
    static String injectionAdvice(Throwable failure) {
        if (!(failure instanceof SecurityException)) return null;
        String message = failure.getMessage();
        if (message == null || !message.contains("INJECT_EVENTS")) return null;
        String maker = (Build.MANUFACTURER + " " + Build.BRAND).toLowerCase(Locale.ROOT);
        String miui = "turn on Settings > Additional settings > Developer options > \"USB debugging (Security settings)\" (MIUI/HyperOS; it may ask to sign in to a Mi account), then reconnect";
        String coloros = "turn on Settings > Additional settings > Developer options > \"Disable permission monitoring\" (ColorOS), then reconnect";
        if (maker.contains("xiaomi") || maker.contains("redmi") || maker.contains("poco")) {
            return "this " + Build.MANUFACTURER + " build blocks input injection from adb: " + miui;
        }
        if (maker.contains("oppo") || maker.contains("realme") || maker.contains("oneplus")) {
            return "this " + Build.MANUFACTURER + " build blocks input injection from adb: " + coloros;
        }
        return "this " + Build.MANUFACTURER + " build blocks input injection from adb: on MIUI/HyperOS " + miui
                + "; on ColorOS " + coloros;
    }
}
