/* Fake of frameworks/base/core/java/android/content/ContextWrapper.java @ android-14.0.0_r1. */
package android.content;

import android.content.res.Resources;

public class ContextWrapper extends Context {
    private Context base;

    public ContextWrapper(Context base) {
        this.base = base;
    }

    protected void attachBaseContext(Context context) {
        if (base != null) throw new IllegalStateException("Base context already set");
        base = context;
    }

    public Context getBaseContext() {
        return base;
    }

    @Override
    public String getPackageName() {
        return base.getPackageName();
    }

    @Override
    public Context getApplicationContext() {
        return base.getApplicationContext();
    }

    @Override
    public Resources getResources() {
        return base.getResources();
    }

    @Override
    public Object getSystemService(String name) {
        return base.getSystemService(name);
    }
}
