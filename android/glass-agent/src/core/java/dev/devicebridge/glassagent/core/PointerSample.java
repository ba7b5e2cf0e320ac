package dev.devicebridge.glassagent.core;

/** One point of a pointer gesture: position and milliseconds since the gesture started. */
public final class PointerSample {
    public final double x;
    public final double y;
    public final long tMs;

    public PointerSample(double x, double y, long tMs) {
        this.x = x;
        this.y = y;
        this.tMs = tMs;
    }
}
