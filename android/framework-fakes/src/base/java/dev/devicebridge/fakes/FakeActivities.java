package dev.devicebridge.fakes;

import android.app.Activity;
import android.app.Instrumentation;
import android.content.Context;
import android.content.res.Resources;
import android.view.View;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * Activities as ActivityThread runs them (frameworks/base/core/java/android/app/ActivityThread.java
 * @ android-6.0.1_r1): {@link #launch} instantiates the class through its public no-argument
 * constructor, attaches a context of the app (performLaunchActivity) and goes onCreate(null) →
 * onStart → onResume through {@link Instrumentation}'s callActivityOn* methods, all on the calling
 * thread; {@link #moveToBack} is onPause → onStop (another activity or the home screen covers it,
 * or the screen goes off), {@link #bringToFront} onRestart → onStart → onResume. There is no
 * activity stack and no state check: tests call these in a real order.
 *
 * <p>The app context answers the activity's Java package as its package name (the manifest package
 * for an app whose activities live there), itself as the application context, {@link
 * Resources#getSystem()} (the fake device's display) for resources and no system services.
 */
public final class FakeActivities {
    private FakeActivities() {}

    public static <T extends Activity> T launch(Class<T> activityClass) {
        T activity;
        try {
            activity = activityClass.getConstructor().newInstance();
            Method attach = Activity.class.getDeclaredMethod("attach", Context.class);
            attach.setAccessible(true);
            attach.invoke(activity, new AppContext(activityClass.getPackage().getName()));
        } catch (InvocationTargetException e) {
            throw rethrow(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot instantiate " + activityClass.getName(), e);
        }
        Instrumentation instrumentation = new Instrumentation();
        instrumentation.callActivityOnCreate(activity, null);
        instrumentation.callActivityOnStart(activity);
        instrumentation.callActivityOnResume(activity);
        return activity;
    }

    public static void moveToBack(Activity activity) {
        Instrumentation instrumentation = new Instrumentation();
        instrumentation.callActivityOnPause(activity);
        instrumentation.callActivityOnStop(activity);
    }

    public static void bringToFront(Activity activity) {
        Instrumentation instrumentation = new Instrumentation();
        instrumentation.callActivityOnRestart(activity);
        instrumentation.callActivityOnStart(activity);
        instrumentation.callActivityOnResume(activity);
    }

    /** The view the activity's setContentView installed (the window's content), or null. */
    public static View contentView(Activity activity) {
        try {
            Field content = Activity.class.getDeclaredField("mContentView");
            content.setAccessible(true);
            return (View) content.get(activity);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException) return (RuntimeException) t;
        if (t instanceof Error) throw (Error) t;
        return new IllegalStateException(t);
    }

    /** ContextImpl.createActivityContext, reduced to what the fakes read. */
    private static final class AppContext extends Context {
        private final String packageName;

        AppContext(String packageName) {
            this.packageName = packageName;
        }

        @Override
        public String getPackageName() {
            return packageName;
        }

        @Override
        public Context getApplicationContext() {
            return this;
        }

        @Override
        public Resources getResources() {
            return Resources.getSystem();
        }

        @Override
        public Object getSystemService(String name) {
            return null;
        }
    }
}
