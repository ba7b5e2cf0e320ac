package dev.devicebridge.glassagent.core;

import java.util.List;

/** What the agent can do on a device; the Android side implements it through hidden APIs. */
public interface Agent {
    String clipboardGet() throws Exception;

    void clipboardSet(String text) throws Exception;

    /** A pointer gesture: DOWN at the first sample, MOVEs, UP at the last, each at its t_ms. */
    void pointer(List<PointerSample> gesture, String button) throws Exception;

    /** The device's uptime clock in milliseconds: the down and event times of injected touches. */
    long uptimeMillis();

    /**
     * One event of a streamed touch ({@link TouchStream}): {@code action} is a MotionEvent action
     * (DOWN, MOVE, UP, CANCEL) of one finger at (x, y), {@code downTime} the stream's DOWN time.
     */
    void touch(int action, long downTime, long eventTime, double x, double y) throws Exception;

    void key(Chord chord) throws Exception;

    /** Type text as given (any Unicode, including surrogate pairs). */
    void text(String text) throws Exception;
}
