/*
 * Fake of frameworks/base/core/java/android/app/ActivityThread.java @ android-14.0.0_r1 (hidden):
 * the fields app_process workarounds fill (sCurrentActivityThread, mSystemThread,
 * mBoundApplication, mInitialApplication, mConfigurationController) and currentApplication(),
 * which is null until mInitialApplication is set. getSystemContext answers a context of package
 * "android" (system resources: Resources.getSystem()).
 */
package android.app;

import android.content.Context;
import android.content.pm.ApplicationInfo;
import dev.devicebridge.fakes.FakeDevice;

public final class ActivityThread implements ActivityThreadInternal {
    private static volatile ActivityThread sCurrentActivityThread;

    static {
        FakeDevice.onReset(new Runnable() {
            @Override
            public void run() {
                sCurrentActivityThread = null;
            }
        });
    }

    boolean mSystemThread;
    AppBindData mBoundApplication;
    Application mInitialApplication;
    /** An android.app.ConfigurationController (API 31+); Object so that the base fakes load below 31. */
    Object mConfigurationController;
    private Context mSystemContext;

    static final class AppBindData {
        ApplicationInfo appInfo;

        AppBindData() {}
    }

    ActivityThread() {}

    public static ActivityThread currentActivityThread() {
        return sCurrentActivityThread;
    }

    public static Application currentApplication() {
        ActivityThread at = sCurrentActivityThread;
        return at != null ? at.mInitialApplication : null;
    }

    @Override
    public Application getApplication() {
        return mInitialApplication;
    }

    public Context getSystemContext() {
        synchronized (this) {
            if (mSystemContext == null) mSystemContext = new SystemContext();
            return mSystemContext;
        }
    }

    /** ContextImpl.createSystemContext: package "android". */
    private static final class SystemContext extends Context {
        @Override
        public String getPackageName() {
            return "android";
        }

        @Override
        public Context getApplicationContext() {
            return null;
        }

        @Override
        public android.content.res.Resources getResources() {
            return android.content.res.Resources.getSystem();
        }

        @Override
        public Object getSystemService(String name) {
            if (INPUT_SERVICE.equals(name)) return android.hardware.input.InputManager.fromContext();
            return null;
        }
    }
}
