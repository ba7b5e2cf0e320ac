/* Fake of frameworks/base/core/java/android/content/pm/ApplicationInfo.java @ android-14.0.0_r1 (packageName). */
package android.content.pm;

public class ApplicationInfo {
    public String packageName;

    public ApplicationInfo() {}
}
