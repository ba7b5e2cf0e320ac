/*
 * Fake of frameworks/base/core/java/android/os/ServiceManager.java @ android-14.0.0_r1 (hidden):
 * getService(name) answers a binder for the system services the fakes implement ("clipboard",
 * "window", "input"), null for any other name (as for a service the device does not run). Add a
 * name here when a fake service is added.
 */
package android.os;

public final class ServiceManager {
    private ServiceManager() {}

    public static IBinder getService(String name) {
        if ("clipboard".equals(name)) return new Binder("android.content.IClipboard");
        if ("window".equals(name)) return new Binder("android.view.IWindowManager");
        if ("input".equals(name)) return new Binder("android.hardware.input.IInputManager");
        return null;
    }
}
