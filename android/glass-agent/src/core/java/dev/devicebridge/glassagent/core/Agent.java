package dev.devicebridge.glassagent.core;

import java.util.List;

/** What the agent can do on a device; the Android side implements it through hidden APIs. */
public interface Agent {
    String clipboardGet() throws Exception;

    void clipboardSet(String text) throws Exception;

    /** A pointer gesture: DOWN at the first sample, MOVEs, UP at the last, each at its t_ms. */
    void pointer(List<PointerSample> gesture, String button) throws Exception;

    void key(Chord chord) throws Exception;

    /** Type text as given (any Unicode, including surrogate pairs). */
    void text(String text) throws Exception;
}
