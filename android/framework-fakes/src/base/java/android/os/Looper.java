/*
 * Fake of frameworks/base/core/java/android/os/Looper.java @ android-14.0.0_r1: prepare,
 * prepareMainLooper (throws IllegalStateException "The main Looper has already been prepared."
 * the second time, as AOSP does), myLooper, getMainLooper. No message queue.
 */
package android.os;

import dev.devicebridge.fakes.FakeDevice;

public final class Looper {
    private static final ThreadLocal<Looper> THREAD = new ThreadLocal<Looper>();
    private static Looper main;
    private final Thread thread;

    static {
        FakeDevice.onReset(new Runnable() {
            @Override
            public void run() {
                synchronized (Looper.class) {
                    main = null;
                }
                THREAD.remove();
            }
        });
    }

    private Looper() {
        thread = Thread.currentThread();
    }

    public static void prepare() {
        if (THREAD.get() != null) throw new RuntimeException("Only one Looper may be created per thread");
        THREAD.set(new Looper());
    }

    public static void prepareMainLooper() {
        prepare();
        synchronized (Looper.class) {
            if (main != null) throw new IllegalStateException("The main Looper has already been prepared.");
            main = myLooper();
        }
    }

    public static synchronized Looper getMainLooper() {
        return main;
    }

    public static Looper myLooper() {
        return THREAD.get();
    }

    public Thread getThread() {
        return thread;
    }
}
