package dev.devicebridge.snapshothelper.core;

/** Monotonic milliseconds (SystemClock.uptimeMillis on a device) and sleeping on the same clock. */
public interface Clock {
    long uptimeMillis();

    void sleep(long ms) throws InterruptedException;
}
