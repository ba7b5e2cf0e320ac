package dev.devicebridge.glassagent;

import android.app.Application;
import android.app.Instrumentation;
import android.content.Context;
import android.content.pm.ApplicationInfo;
import android.os.Build;
import android.os.Looper;
import dev.devicebridge.glass.common.JsonLineProtocol;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * The app_process start-up state framework code expects of an app process, filled in as scrcpy's
 * Workarounds does: a main looper; an ActivityThread as sCurrentActivityThread (a system thread);
 * on Android 12+ its ConfigurationController (Samsung's DisplayManagerGlobal asks for the
 * configuration); its bound application info and initial Application, of package
 * com.android.shell ({@link ShellContext}). Each step is best-effort: a failure is noted and the
 * next step still runs; none is fatal.
 */
final class Workarounds {
    private Workarounds() {}

    /** Applies every workaround; returns a note per step that failed or was skipped ("step: why"). */
    static List<String> apply() {
        List<String> notes = new ArrayList<String>();
        try {
            Looper.prepareMainLooper();
        } catch (Throwable t) {
            notes.add("prepareMainLooper: " + JsonLineProtocol.describe(t));
        }
        Class<?> activityThreadClass;
        Object activityThread;
        try {
            activityThreadClass = Class.forName("android.app.ActivityThread");
            activityThread = activityThread(activityThreadClass);
        } catch (Throwable t) {
            notes.add("ActivityThread: " + JsonLineProtocol.describe(t) + " (no further workaround applies)");
            return notes;
        }
        if (Build.VERSION.SDK_INT >= 31) {
            try {
                fillConfigurationController(activityThreadClass, activityThread);
            } catch (Throwable t) {
                notes.add("fillConfigurationController: " + JsonLineProtocol.describe(t));
            }
        } else {
            notes.add("fillConfigurationController: skipped, ConfigurationController is Android 12+ (API " + Build.VERSION.SDK_INT + ")");
        }
        // ONYX e-readers break when the app info is filled (scrcpy #5182).
        if (!"ONYX".equalsIgnoreCase(Build.BRAND)) {
            try {
                fillAppInfo(activityThreadClass, activityThread);
            } catch (Throwable t) {
                notes.add("fillAppInfo: " + JsonLineProtocol.describe(t));
            }
        } else {
            notes.add("fillAppInfo: skipped on ONYX");
        }
        try {
            fillAppContext(activityThreadClass, activityThread);
        } catch (Throwable t) {
            notes.add("fillAppContext: " + JsonLineProtocol.describe(t));
        }
        return notes;
    }

    private static Field field(Class<?> cls, String name) throws NoSuchFieldException {
        Field f = cls.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }

    /** The current ActivityThread, or a new one made current, as a system thread. */
    private static Object activityThread(Class<?> cls) throws Exception {
        Method current = cls.getDeclaredMethod("currentActivityThread");
        current.setAccessible(true);
        Object thread = current.invoke(null);
        if (thread == null) {
            Constructor<?> constructor = cls.getDeclaredConstructor();
            constructor.setAccessible(true);
            thread = constructor.newInstance();
            field(cls, "sCurrentActivityThread").set(null, thread);
        }
        field(cls, "mSystemThread").setBoolean(thread, true);
        return thread;
    }

    private static void fillConfigurationController(Class<?> activityThreadClass, Object activityThread) throws Exception {
        Class<?> controllerClass = Class.forName("android.app.ConfigurationController");
        Class<?> internal = Class.forName("android.app.ActivityThreadInternal");
        Constructor<?> constructor = controllerClass.getDeclaredConstructor(internal);
        constructor.setAccessible(true);
        field(activityThreadClass, "mConfigurationController").set(activityThread, constructor.newInstance(activityThread));
    }

    private static void fillAppInfo(Class<?> activityThreadClass, Object activityThread) throws Exception {
        Class<?> bindDataClass = Class.forName("android.app.ActivityThread$AppBindData");
        Constructor<?> constructor = bindDataClass.getDeclaredConstructor();
        constructor.setAccessible(true);
        Object bindData = constructor.newInstance();
        ApplicationInfo info = new ApplicationInfo();
        info.packageName = ShellContext.PACKAGE_NAME;
        field(bindDataClass, "appInfo").set(bindData, info);
        field(activityThreadClass, "mBoundApplication").set(activityThread, bindData);
    }

    private static void fillAppContext(Class<?> activityThreadClass, Object activityThread) throws Exception {
        Method systemContext = activityThreadClass.getDeclaredMethod("getSystemContext");
        systemContext.setAccessible(true);
        Context base = (Context) systemContext.invoke(activityThread);
        Application app = Instrumentation.newApplication(Application.class, new ShellContext(base));
        field(activityThreadClass, "mInitialApplication").set(activityThread, app);
    }
}
