package dev.devicebridge.snapshothelper.core;

import java.util.List;
import java.util.Map;

/**
 * The snapshot helper without Android: one-shot modes (snapshot, viewport, gesture), the persistent
 * session's command handling, and every field of the output contract (seed 000). The instrumentation
 * only adapts the device (UiSource, Injector, Clock) and moves Fields into Bundles and bytes into
 * sockets.
 */
public final class HelperCore {
    /** How a one-shot run ends: finish(code, result), or a session to start on sessionPort. */
    public static final class Outcome {
        public final int code;
        public final Fields result;
        public final int sessionPort;
        public final HelperOptions options;

        Outcome(int code, Fields result, int sessionPort, HelperOptions options) {
            this.code = code;
            this.result = result;
            this.sessionPort = sessionPort;
            this.options = options;
        }
    }

    /** A capture: the XML bytes and the result fields that describe it. */
    public static final class Capture {
        public final byte[] xml;
        public final Fields fields;

        Capture(byte[] xml, Fields fields) {
            this.xml = xml;
            this.fields = fields;
        }
    }

    private final UiSource ui;
    private final Injector injector;
    private final Clock clock;

    public HelperCore(UiSource ui, Injector injector, Clock clock) {
        this.ui = ui;
        this.injector = injector;
        this.clock = clock;
    }

    /** One {@code am instrument} run: chunk statuses go to {@code sink}; the outcome says how to finish. */
    public Outcome runOneShot(Map<String, String> extras, StatusSink sink) {
        HelperOptions options;
        try {
            options = HelperOptions.parse(extras);
        } catch (RuntimeException e) {
            return new Outcome(Protocol.RESULT_CODE_ERROR, Protocol.protocolFields().putAll(Protocol.errorFields(e)), 0, null);
        }
        Fields metadata = options.metadata();
        try {
            String mode = HelperOptions.stringExtra(extras, "mode");
            if ("viewport".equals(mode)) {
                return ok(metadata.putAll(viewport()), options);
            }
            if ("gesture".equals(mode)) {
                return ok(metadata.putAll(gesture(HelperOptions.stringExtra(extras, "payloadBase64"))), options);
            }
            if (mode != null && !"snapshot".equals(mode)) {
                throw new IllegalArgumentException("Unsupported mode: " + mode);
            }
            int sessionPort = HelperOptions.intExtra(extras, "sessionPort", 0);
            if (sessionPort > 65535) throw new IllegalArgumentException("Port value out of range: " + sessionPort);
            if (sessionPort > 0) return new Outcome(Protocol.RESULT_CODE_OK, null, sessionPort, options);
            Capture capture = capture(options);
            String emitChunks = HelperOptions.stringExtra(extras, "emitChunks");
            if (emitChunks == null || !"false".equalsIgnoreCase(emitChunks)) {
                for (Fields record : Chunks.records(capture.xml)) sink.status(Protocol.STATUS_CODE_CHUNK, record);
            }
            return ok(metadata.put("ok", "true").putAll(capture.fields), options);
        } catch (Exception e) {
            return new Outcome(Protocol.RESULT_CODE_ERROR, metadata.putAll(Protocol.errorFields(e)), 0, options);
        }
    }

    private static Outcome ok(Fields result, HelperOptions options) {
        return new Outcome(Protocol.RESULT_CODE_OK, result, 0, options);
    }

    /** The status a session sends once it listens (status code {@link Protocol#STATUS_CODE_SESSION_READY}). */
    public static Fields sessionReady(HelperOptions options, int port) {
        return options.metadata().put("sessionReady", "true").put("sessionPort", port);
    }

    /** The final result after {@code quit}. */
    public static Fields sessionEnded(HelperOptions options) {
        return options.metadata().put("ok", "true").put("sessionEnded", "true");
    }

    /** The final result when the session cannot start (for example, the port is taken). */
    public static Fields sessionFailed(HelperOptions options, Throwable error) {
        return options.metadata().putAll(Protocol.errorFields(error));
    }

    /** Answer one session command line; null is a connection closed before any line. */
    public SessionResponse session(String line, HelperOptions options) {
        if (line == null) {
            return new SessionResponse(sessionFields("").putAll(Protocol.errorFields(
                    new HelperFailure("java.io.EOFException", "empty command"))), null, false);
        }
        SessionCommand command = SessionCommand.parse(line);
        try {
            if ("quit".equals(command.action)) {
                return new SessionResponse(sessionFields(command.requestId).put("ok", "true"), null, true);
            }
            if ("viewport".equals(command.action)) {
                return new SessionResponse(sessionFields(command.requestId).putAll(viewport()), null, false);
            }
            if ("gesture".equals(command.action)) {
                return new SessionResponse(sessionFields(command.requestId).putAll(gesture(command.payload)), null, false);
            }
            if (!"snapshot".equals(command.action)) {
                throw new IllegalArgumentException("unknown session command");
            }
            Capture capture = capture(options);
            Fields headers = options.metadata().put("requestId", command.requestId).put("ok", "true")
                    .putAll(capture.fields).put("byteLength", capture.xml.length);
            return new SessionResponse(headers, capture.xml, false);
        } catch (Exception e) {
            return new SessionResponse(sessionFields(command.requestId).putAll(Protocol.errorFields(e)), null, false);
        }
    }

    private static Fields sessionFields(String requestId) {
        return Protocol.protocolFields().put("requestId", requestId);
    }

    /**
     * Bounded idle wait (waitForIdleTimeoutMs is a maximum; 0 skips it), root acquisition with its
     * stabilisation bound, then the XML within maxDepth/maxNodes. Both waits stay inside timeoutMs.
     */
    public Capture capture(HelperOptions o) throws InterruptedException {
        long started = clock.uptimeMillis();
        long budget = o.timeoutMs > 0 ? o.timeoutMs : Long.MAX_VALUE;
        long idle = Math.min(o.waitForIdleTimeoutMs, budget);
        if (idle > 0) ui.waitForIdle(Math.min(o.waitForIdleQuietMs, idle), idle);
        long left = budget - (clock.uptimeMillis() - started);
        UiSource.Acquisition a = RootAcquirer.acquire(ui, clock, Math.min(RootAcquirer.STABILIZATION_BOUND_MS, Math.max(0, left)));
        UiXmlWriter.Result r = UiXmlWriter.write(a.roots, ui.rotation(), o.maxDepth, o.maxNodes);
        byte[] xml = SessionResponse.utf8(r.xml);
        boolean rootPresent = false;
        for (WindowRoot root : a.roots) rootPresent |= root != null && root.root != null;
        Fields fields = new Fields()
                .put("rootPresent", rootPresent)
                .put("captureMode", a.captureMode)
                .put("windowCount", r.windowCount)
                .put("nodeCount", r.nodeCount)
                .put("truncated", r.truncated)
                .put("elapsedMs", clock.uptimeMillis() - started);
        return new Capture(xml, fields);
    }

    public Fields viewport() {
        return Viewport.fields(Viewport.of(ui.acquire().roots));
    }

    /** Validate the plan, then inject its events, each at its offset from the down time. */
    public Fields gesture(String payloadBase64) throws Exception {
        long started = clock.uptimeMillis();
        if (payloadBase64 == null || payloadBase64.isEmpty()) throw new IllegalArgumentException("Missing payloadBase64");
        TouchPlan plan = TouchPlanParser.parseBase64(payloadBase64);
        List<MotionSchedule.Step> steps = MotionSchedule.of(plan);
        long downTime = clock.uptimeMillis();
        for (MotionSchedule.Step step : steps) {
            long at = downTime + step.offsetMs;
            long now = clock.uptimeMillis();
            if (at > now) clock.sleep(at - now);
            injector.inject(step, downTime, at);
        }
        return new Fields().put("ok", "true").put("kind", plan.kind)
                .put("injectedEvents", steps.size()).put("elapsedMs", clock.uptimeMillis() - started);
    }
}
