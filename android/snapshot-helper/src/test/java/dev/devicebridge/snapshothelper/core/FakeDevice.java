package dev.devicebridge.snapshothelper.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** A UiSource + Injector + Clock for tests: a virtual clock that only moves when someone sleeps or waits. */
public final class FakeDevice implements UiSource, Injector, Clock {
    public long now = 1000;
    public List<WindowRoot> roots = new ArrayList<WindowRoot>();
    public String captureMode = Protocol.CAPTURE_INTERACTIVE_WINDOWS;
    /** Acquisitions that report incomplete before the device settles. */
    public int incompleteAttempts;
    public int acquisitions;
    public int rotation;
    /** How long the UI takes to become idle; waitForIdle advances the clock by min(this, timeout). */
    public long busyMs;
    public final List<long[]> idleWaits = new ArrayList<long[]>();
    public final List<MotionSchedule.Step> injected = new ArrayList<MotionSchedule.Step>();
    public final List<Long> injectedAt = new ArrayList<Long>();
    public final List<Long> injectedEventTimes = new ArrayList<Long>();

    @Override
    public void waitForIdle(long quietMs, long timeoutMs) {
        idleWaits.add(new long[] {quietMs, timeoutMs});
        now += Math.min(busyMs + quietMs, timeoutMs);
    }

    @Override
    public Acquisition acquire() {
        acquisitions++;
        boolean complete = acquisitions > incompleteAttempts;
        return new Acquisition(complete ? roots : Collections.<WindowRoot>emptyList(), captureMode, complete);
    }

    @Override
    public int rotation() {
        return rotation;
    }

    @Override
    public void inject(MotionSchedule.Step step, long downTime, long eventTime) {
        injected.add(step);
        injectedAt.add(now - downTime);
        injectedEventTimes.add(eventTime - downTime);
    }

    @Override
    public long uptimeMillis() {
        return now;
    }

    @Override
    public void sleep(long ms) {
        now += ms;
    }
}
