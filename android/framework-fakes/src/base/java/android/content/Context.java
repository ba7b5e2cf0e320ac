/*
 * Fake of frameworks/base/core/java/android/content/Context.java @ android-14.0.0_r1: the few
 * members the adapters use (package names, system services, resources). getOpPackageName is hidden on a
 * device; here it is a plain method so a subclass can declare it without @Override, as the
 * adapters must when compiled against API 23.
 */
package android.content;

import android.content.res.Resources;

public abstract class Context {
    public static final String CLIPBOARD_SERVICE = "clipboard";
    public static final String INPUT_SERVICE = "input";
    public static final String WINDOW_SERVICE = "window";

    public abstract String getPackageName();

    public String getOpPackageName() {
        return getPackageName();
    }

    public abstract Context getApplicationContext();

    public abstract Resources getResources();

    public abstract Object getSystemService(String name);

    @SuppressWarnings("unchecked")
    public final <T> T getSystemService(Class<T> serviceClass) {
        if ("android.hardware.input.InputManager".equals(serviceClass.getName())) {
            return (T) getSystemService(INPUT_SERVICE);
        }
        return null;
    }
}
