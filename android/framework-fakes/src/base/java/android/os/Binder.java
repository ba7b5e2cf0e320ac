/* Fake of frameworks/base/core/java/android/os/Binder.java @ android-14.0.0_r1: a local binder with a descriptor. */
package android.os;

public class Binder implements IBinder {
    private final String descriptor;

    public Binder() {
        this("");
    }

    public Binder(String descriptor) {
        this.descriptor = descriptor;
    }

    @Override
    public String getInterfaceDescriptor() {
        return descriptor;
    }
}
