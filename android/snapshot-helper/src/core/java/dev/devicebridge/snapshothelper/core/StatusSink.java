package dev.devicebridge.snapshothelper.core;

/** Instrumentation.sendStatus. */
public interface StatusSink {
    void status(int code, Fields fields);
}
