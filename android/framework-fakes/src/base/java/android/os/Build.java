/*
 * Fake of frameworks/base/core/java/android/os/Build.java @ android-14.0.0_r1: the fields the
 * adapters read, filled from the test JVM's profile (dev.devicebridge.fakes.Profile). SDK_INT is
 * read at class initialisation, never a compile-time constant. VERSION_CODES stops at M (23): the
 * adapters compile against API 23, where newer codes do not exist.
 */
package android.os;

import dev.devicebridge.fakes.Profile;

public class Build {
    public static final String MANUFACTURER = Profile.current().oem.manufacturer;
    public static final String BRAND = Profile.current().oem.brand;
    public static final String MODEL = "fake-" + Profile.current().name;
    public static final String DEVICE = "fake";

    public static class VERSION {
        public static final int SDK_INT = Profile.current().sdk;
        public static final String RELEASE = String.valueOf(Profile.current().sdk);
        public static final String CODENAME = "REL";
    }

    public static class VERSION_CODES {
        public static final int LOLLIPOP = 21;
        public static final int LOLLIPOP_MR1 = 22;
        public static final int M = 23;
    }
}
