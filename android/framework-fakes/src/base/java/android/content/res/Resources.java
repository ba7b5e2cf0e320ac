/*
 * Fake of frameworks/base/core/java/android/content/res/Resources.java @ android-6.0.1_r1: only
 * getSystem() and getDisplayMetrics(). No assets, strings or configuration. The fake device has one
 * display, 420 dpi (density 2.625, a common xxhdpi-class phone); an app's Resources on the default
 * display carry the same DisplayMetrics as the system's, so the fake contexts all answer
 * getSystem(). The public constructor (AssetManager, DisplayMetrics, Configuration) is left out.
 */
package android.content.res;

import android.util.DisplayMetrics;
import dev.devicebridge.fakes.FakeDevice;

public class Resources {
    /** The fake device's display density (DisplayMetrics.densityDpi). */
    private static final int DENSITY_DPI = 420;
    private static Resources mSystem;

    static {
        FakeDevice.onReset(new Runnable() {
            @Override
            public void run() {
                synchronized (Resources.class) {
                    mSystem = null;
                }
            }
        });
    }

    private final DisplayMetrics mMetrics = new DisplayMetrics();

    private Resources() {
        mMetrics.densityDpi = DENSITY_DPI;
        mMetrics.density = DENSITY_DPI / 160f;
    }

    public static synchronized Resources getSystem() {
        if (mSystem == null) mSystem = new Resources();
        return mSystem;
    }

    public DisplayMetrics getDisplayMetrics() {
        return mMetrics;
    }
}
