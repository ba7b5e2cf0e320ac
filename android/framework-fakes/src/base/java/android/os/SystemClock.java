/* Fake of frameworks/base/core/java/android/os/SystemClock.java @ android-14.0.0_r1 (uptimeMillis, sleep). */
package android.os;

public final class SystemClock {
    private static final long START = System.nanoTime();

    private SystemClock() {}

    /** Milliseconds since "boot" (this JVM's start), monotonic. */
    public static long uptimeMillis() {
        return (System.nanoTime() - START) / 1000000L + 1000L;
    }

    public static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
