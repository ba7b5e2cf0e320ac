/*
 * Fake of frameworks/base/core/java/android/app/ConfigurationController.java @ android-12.0.0_r1
 * (hidden, API 31+; overlay api31). Samsung's DisplayManagerGlobal needs one set on
 * ActivityThread.mConfigurationController in app_process (scrcpy #4467).
 */
package android.app;

class ConfigurationController {
    final ActivityThreadInternal activityThread;

    ConfigurationController(ActivityThreadInternal activityThread) {
        this.activityThread = activityThread;
    }
}
