/* Fake of frameworks/base/core/java/android/app/Application.java @ android-14.0.0_r1 (attach is hidden). */
package android.app;

import android.content.Context;
import android.content.ContextWrapper;

public class Application extends ContextWrapper {
    public Application() {
        super(null);
    }

    final void attach(Context context) {
        attachBaseContext(context);
    }
}
