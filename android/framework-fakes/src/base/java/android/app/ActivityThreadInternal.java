/*
 * Fake of frameworks/base/core/java/android/app/ActivityThreadInternal.java @ android-12.0.0_r1
 * (hidden). On a device it appears in API 31; here it is on every profile because the base
 * ActivityThread implements it. Adapters only reach it together with ConfigurationController,
 * which is in the api31 overlay, so lookups below 31 still fail as on a device.
 */
package android.app;

interface ActivityThreadInternal {
    Application getApplication();
}
