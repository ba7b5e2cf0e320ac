package dev.devicebridge.fakes;

import android.os.Bundle;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code am instrument -w} would print: the status records an instrumentation sent and its
 * final result (the fake {@code android.app.Instrumentation} reports here).
 */
public final class FakeInstrumentation {
    private FakeInstrumentation() {}

    static {
        FakeDevice.onReset(new Runnable() {
            @Override
            public void run() {
                reset();
            }
        });
    }

    /** One INSTRUMENTATION_STATUS record or the INSTRUMENTATION_RESULT. */
    public static final class Record {
        public final int code;
        public final Bundle bundle;

        Record(int code, Bundle bundle) {
            this.code = code;
            this.bundle = bundle;
        }

        public String get(String key) {
            Object v = bundle == null ? null : bundle.get(key);
            return v == null ? null : String.valueOf(v);
        }
    }

    private static final List<Record> STATUSES = new ArrayList<Record>();
    private static Record result;
    private static int finishes;

    static synchronized void reset() {
        STATUSES.clear();
        result = null;
        finishes = 0;
    }

    public static synchronized void status(int code, Bundle bundle) {
        STATUSES.add(new Record(code, bundle));
        FakeInstrumentation.class.notifyAll();
    }

    public static synchronized void finished(int code, Bundle bundle) {
        finishes++;
        if (result == null) result = new Record(code, bundle);
        FakeInstrumentation.class.notifyAll();
    }

    public static synchronized List<Record> statuses() {
        return new ArrayList<Record>(STATUSES);
    }

    /** How many times finish() was called (more than one is a bug: AOSP finishes once). */
    public static synchronized int finishes() {
        return finishes;
    }

    /** The first status with {@code code}, waiting up to timeoutMs; throws AssertionError when none came. */
    public static synchronized Record awaitStatus(int code, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (true) {
            for (Record r : STATUSES) if (r.code == code) return r;
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) throw new AssertionError("no status " + code + " within " + timeoutMs + " ms; result " + describe(result));
            FakeInstrumentation.class.wait(left);
        }
    }

    /** The final result, waiting up to timeoutMs; throws AssertionError when the run did not finish. */
    public static synchronized Record awaitResult(long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (result == null) {
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) throw new AssertionError("the instrumentation did not finish within " + timeoutMs + " ms");
            FakeInstrumentation.class.wait(left);
        }
        return result;
    }

    private static String describe(Record r) {
        return r == null ? "none" : r.code + " " + r.bundle;
    }
}
