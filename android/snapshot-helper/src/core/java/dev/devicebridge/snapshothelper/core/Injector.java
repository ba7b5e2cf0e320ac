package dev.devicebridge.snapshothelper.core;

/** Injects one motion event (UiAutomation.injectInputEvent on a device). */
public interface Injector {
    void inject(MotionSchedule.Step step, long downTime, long eventTime) throws Exception;
}
