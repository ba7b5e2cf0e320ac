/*
 * Fake of frameworks/base/core/java/android/util/DisplayMetrics.java @ android-6.0.1_r1: the public
 * density fields, zero until filled (as the real no-argument constructor leaves them).
 * android.content.res.Resources.getSystem() fills them with the fake device's display.
 */
package android.util;

public class DisplayMetrics {
    /** densityDpi / 160 (DENSITY_DEFAULT). */
    public float density;
    public int densityDpi;

    public DisplayMetrics() {}
}
