package dev.devicebridge.snapshothelper.core;

import java.util.List;

/** The device's accessibility side: idle waiting, window roots, display rotation. */
public interface UiSource {
    /** What one attempt to read the windows gave. */
    final class Acquisition {
        public final List<WindowRoot> roots;
        /** {@link Protocol#CAPTURE_INTERACTIVE_WINDOWS} or {@link Protocol#CAPTURE_ACTIVE_WINDOW}. */
        public final String captureMode;
        /**
         * False when a root is missing that should come back soon: no root at all, or the active or
         * focused window without its root. The acquirer retries those within its stabilisation bound.
         */
        public final boolean complete;

        public Acquisition(List<WindowRoot> roots, String captureMode, boolean complete) {
            this.roots = roots;
            this.captureMode = captureMode;
            this.complete = complete;
        }
    }

    /** Returns when the UI has been quiet for quietMs, or after timeoutMs at most (never fails on timeout). */
    void waitForIdle(long quietMs, long timeoutMs) throws InterruptedException;

    Acquisition acquire();

    int rotation();
}
