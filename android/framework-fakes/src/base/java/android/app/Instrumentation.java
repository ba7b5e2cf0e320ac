/* Fake of frameworks/base/core/java/android/app/Instrumentation.java @ android-14.0.0_r1: newApplication(Class, Context). */
package android.app;

import android.content.Context;

public class Instrumentation {
    public static Application newApplication(Class<?> clazz, Context context)
            throws InstantiationException, IllegalAccessException, ClassNotFoundException {
        Application app = (Application) clazz.newInstance();
        app.attach(context);
        return app;
    }
}
