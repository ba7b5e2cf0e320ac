package dev.devicebridge.snapshothelper.core;

/**
 * Root acquisition with its own stabilisation bound (seed 000): a complete acquisition is returned
 * at once; an incomplete one (no root, or the active/focused window without its root) is retried
 * every {@link #POLL_MS} until it is complete or {@code boundMs} has passed, and then the last
 * attempt is returned as it is. Complete captures pay no wait.
 */
public final class RootAcquirer {
    public static final long STABILIZATION_BOUND_MS = 500;
    public static final long POLL_MS = 50;

    private RootAcquirer() {}

    public static UiSource.Acquisition acquire(UiSource ui, Clock clock, long boundMs) throws InterruptedException {
        long deadline = clock.uptimeMillis() + Math.max(0, boundMs);
        UiSource.Acquisition a = ui.acquire();
        while (!a.complete) {
            long left = deadline - clock.uptimeMillis();
            if (left <= 0) break;
            clock.sleep(Math.min(POLL_MS, left));
            a = ui.acquire();
        }
        return a;
    }
}
