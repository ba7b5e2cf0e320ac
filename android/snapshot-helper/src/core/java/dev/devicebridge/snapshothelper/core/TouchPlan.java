package dev.devicebridge.snapshothelper.core;

import java.util.Collections;
import java.util.List;

/** A validated android-touch-plan-v1 gesture. */
public final class TouchPlan {
    public static final String PROTOCOL = "android-touch-plan-v1";
    public static final int MAX_DURATION_MS = 120000;

    public static final class Sample {
        public final long offsetMs;
        public final double x;
        public final double y;

        public Sample(long offsetMs, double x, double y) {
            this.offsetMs = offsetMs;
            this.x = x;
            this.y = y;
        }
    }

    public static final class Pointer {
        public final int pointerId;
        public final List<Sample> samples;

        public Pointer(int pointerId, List<Sample> samples) {
            this.pointerId = pointerId;
            this.samples = Collections.unmodifiableList(samples);
        }
    }

    /** "swipe" (one pointer) or "transform" (two pointers). */
    public final String kind;
    public final long durationMs;
    public final List<Pointer> pointers;

    public TouchPlan(String kind, long durationMs, List<Pointer> pointers) {
        this.kind = kind;
        this.durationMs = durationMs;
        this.pointers = Collections.unmodifiableList(pointers);
    }
}
