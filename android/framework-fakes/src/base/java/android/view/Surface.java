/*
 * Fake of frameworks/base/core/java/android/view/Surface.java @ android-14.0.0_r1: the ROTATION_*
 * constants, release() and isValid(). A surface made by MediaCodec.createInputSurface() feeds that
 * encoder (dev.devicebridge.fakes.FakeMedia): whatever a display mirrored into it draws becomes a
 * frame of the encoder.
 */
package android.view;

public class Surface {
    public static final int ROTATION_0 = 0;
    public static final int ROTATION_90 = 1;
    public static final int ROTATION_180 = 2;
    public static final int ROTATION_270 = 3;

    private boolean released;
    /** Fake-only: the encoder this surface is the input of (a FakeMedia.Encoder), or null. */
    public final Object consumer;

    /** Hidden (@UnsupportedAppUsage) in AOSP; the fakes make input surfaces with it. */
    public Surface(Object consumer) {
        this.consumer = consumer;
    }

    public synchronized void release() {
        released = true;
    }

    public synchronized boolean isValid() {
        return !released;
    }

    @Override
    public String toString() {
        return "Surface(" + consumer + (released ? ", released" : "") + ")";
    }
}
