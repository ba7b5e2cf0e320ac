/*
 * Fake of frameworks/base/core/java/android/app/Instrumentation.java, per release:
 * - newApplication(Class, Context) (android-14.0.0_r1).
 * - onCreate/start/onStart: start() runs onStart() on a new thread ("Instr: ..."), as AOSP does.
 * - getUiAutomation() connects one UiAutomation (flags 0) held in mUiAutomation; from API 24 it is
 *   getUiAutomation(0), and getUiAutomation(int flags) (API 24) reconnects when the flags differ or
 *   the instance was destroyed. Below 24 getUiAutomation(int) does not exist (NoSuchMethodError).
 * - finish(code, results): disconnects mUiAutomation first — below API 24 whenever it is non-null
 *   (android-6.0.1_r1: a second disconnect throws "UiAutomation not connected!"), from 24 only
 *   when it is not destroyed — then reports the result (dev.devicebridge.fakes.FakeInstrumentation).
 * - sendStatus(code, results): recorded in FakeInstrumentation.
 * - callActivityOnCreate/Start/Restart/Resume/Pause/Stop (android-6.0.1_r1): call the activity's
 *   onCreate(icicle)/onStart()/... (ActivityThread calls these to move an activity through its life
 *   cycle; dev.devicebridge.fakes.FakeActivities does). No ActivityMonitors, no mCalled check.
 */
package android.app;

import android.content.Context;
import android.os.Bundle;
import android.view.WindowManager;
import dev.devicebridge.fakes.FakeAccessibility;
import dev.devicebridge.fakes.FakeInstrumentation;
import dev.devicebridge.fakes.Profile;

public class Instrumentation {
    private UiAutomation mUiAutomation;

    public static Application newApplication(Class<?> clazz, Context context)
            throws InstantiationException, IllegalAccessException, ClassNotFoundException {
        Application app = (Application) clazz.newInstance();
        app.attach(context);
        return app;
    }

    public void onCreate(Bundle arguments) {}

    public void start() {
        Thread runner = new Thread(new Runnable() {
            @Override
            public void run() {
                onStart();
            }
        }, "Instr: " + getClass().getName());
        runner.setDaemon(true);
        runner.start();
    }

    public void onStart() {}

    public Context getContext() {
        return new Context() {
            @Override
            public String getPackageName() {
                return "dev.devicebridge.snapshothelper";
            }

            @Override
            public Context getApplicationContext() {
                return this;
            }

            @Override
            public android.content.res.Resources getResources() {
                return android.content.res.Resources.getSystem();
            }

            @Override
            public Object getSystemService(String name) {
                return WINDOW_SERVICE.equals(name) ? new WindowManager.Fake() : null;
            }
        };
    }

    public UiAutomation getUiAutomation() {
        if (Profile.current().atLeast(24)) return connectedUiAutomation(0, "getUiAutomation()");
        FakeAccessibility.record("getUiAutomation()");
        synchronized (this) {
            if (mUiAutomation == null) {
                UiAutomation ua = new UiAutomation();
                ua.connect(0);
                mUiAutomation = ua;
            }
            return mUiAutomation;
        }
    }

    /** API 24. */
    public UiAutomation getUiAutomation(int flags) {
        if (!Profile.current().atLeast(24)) {
            throw new NoSuchMethodError("Instrumentation.getUiAutomation(int) does not exist on API " + Profile.current().sdk);
        }
        return connectedUiAutomation(flags, "getUiAutomation(" + flags + ")");
    }

    private synchronized UiAutomation connectedUiAutomation(int flags, String call) {
        FakeAccessibility.record(call);
        boolean fresh = mUiAutomation == null || mUiAutomation.isDestroyed();
        if (fresh) {
            UiAutomation ua = new UiAutomation();
            ua.connect(flags);
            mUiAutomation = ua;
        } else if (mUiAutomation.getFlags() != flags) {
            mUiAutomation.disconnect();
            mUiAutomation.connect(flags);
        }
        return mUiAutomation;
    }

    public void sendStatus(int resultCode, Bundle results) {
        FakeInstrumentation.status(resultCode, results);
    }

    public void finish(int resultCode, Bundle results) {
        UiAutomation ua;
        synchronized (this) {
            ua = mUiAutomation;
        }
        if (ua != null && (!Profile.current().atLeast(24) || !ua.isDestroyed())) {
            ua.disconnect();
        }
        synchronized (this) {
            mUiAutomation = null;
        }
        FakeInstrumentation.finished(resultCode, results);
    }

    public void callActivityOnCreate(Activity activity, Bundle icicle) {
        activity.onCreate(icicle);
    }

    public void callActivityOnStart(Activity activity) {
        activity.onStart();
    }

    public void callActivityOnRestart(Activity activity) {
        activity.onRestart();
    }

    public void callActivityOnResume(Activity activity) {
        activity.onResume();
    }

    public void callActivityOnPause(Activity activity) {
        activity.onPause();
    }

    public void callActivityOnStop(Activity activity) {
        activity.onStop();
    }
}
