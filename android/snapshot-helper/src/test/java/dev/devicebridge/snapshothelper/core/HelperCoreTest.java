package dev.devicebridge.snapshothelper.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Before;
import org.junit.Test;

public class HelperCoreTest {
    private FakeDevice device;
    private HelperCore core;
    private final List<Fields> statuses = new ArrayList<Fields>();
    private final List<Integer> codes = new ArrayList<Integer>();
    private final StatusSink sink = new StatusSink() {
        @Override
        public void status(int code, Fields fields) {
            codes.add(code);
            statuses.add(fields);
        }
    };

    private static Map<String, String> extras(String... kv) {
        Map<String, String> m = new HashMap<String, String>();
        for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
        return m;
    }

    @Before
    public void setUp() {
        device = new FakeDevice();
        FakeNode app = new FakeNode("android.widget.FrameLayout", new Rect(0, 0, 1080, 2400));
        for (int i = 0; i < 60; i++) {
            FakeNode row = new FakeNode("android.widget.TextView", new Rect(0, i * 40, 1080, i * 40 + 40));
            row.text = "Row number " + i + " with some text to make the XML longer than one chunk";
            app.add(row);
        }
        FakeNode keyboard = new FakeNode("android.widget.FrameLayout", new Rect(0, 1600, 1080, 2400));
        keyboard.packageName = "com.google.android.inputmethod.latin";
        device.roots.add(new WindowRoot(app, new WindowInfo(0, 1, 2, true, true, new Rect(0, 0, 1080, 2400))));
        device.roots.add(new WindowRoot(keyboard, new WindowInfo(1, 2, 3, false, false, new Rect(0, 1600, 1080, 2400))));
        core = new HelperCore(device, device, device);
    }

    @Test
    public void oneShotSnapshotStreamsChunksThenTheResult() {
        HelperCore.Outcome out = core.runOneShot(extras(), sink);
        assertEquals(Protocol.RESULT_CODE_OK, out.code);
        Fields r = out.result;
        assertEquals("true", r.get("ok"));
        assertEquals("2", r.get("helperApiVersion"));
        assertEquals("500", r.get("waitForIdleTimeoutMs"));
        assertEquals("true", r.get("rootPresent"));
        assertEquals("interactive-windows", r.get("captureMode"));
        assertEquals("2", r.get("windowCount"));
        assertEquals("62", r.get("nodeCount"));
        assertEquals("false", r.get("truncated"));
        StringBuilder b64 = new StringBuilder();
        byte[] joined = new byte[0];
        for (int i = 0; i < statuses.size(); i++) {
            assertEquals(Integer.valueOf(Protocol.STATUS_CODE_CHUNK), codes.get(i));
            byte[] part = java.util.Base64.getDecoder().decode(statuses.get(i).get("payloadBase64"));
            byte[] next = new byte[joined.length + part.length];
            System.arraycopy(joined, 0, next, 0, joined.length);
            System.arraycopy(part, 0, next, joined.length, part.length);
            joined = next;
            b64.append('x');
        }
        assertTrue(statuses.size() > 1);
        String xml = new String(joined, StandardCharsets.UTF_8);
        assertTrue(xml.startsWith(UiXmlWriter.DECLARATION + "<hierarchy rotation=\"0\"><node index=\"0\" window-index=\"0\""));
        assertTrue(xml.endsWith("</hierarchy>"));
        // The idle wait is bounded by waitForIdleTimeoutMs; the quiet window is waitForIdleQuietMs.
        assertEquals(100, device.idleWaits.get(0)[0]);
        assertEquals(500, device.idleWaits.get(0)[1]);
        assertEquals("100", r.get("elapsedMs"));
    }

    @Test
    public void zeroIdleTimeoutSkipsTheWaitAndEmitChunksFalseSendsNoChunks() {
        HelperCore.Outcome out = core.runOneShot(extras("waitForIdleTimeoutMs", "0", "emitChunks", "FALSE"), sink);
        assertEquals("true", out.result.get("ok"));
        assertTrue(device.idleWaits.isEmpty());
        assertTrue(statuses.isEmpty());
        assertEquals("0", out.result.get("elapsedMs"));
    }

    @Test
    public void idleWaitIsAMaximumEvenWhenTheUiNeverSettles() {
        device.busyMs = 60000;
        HelperCore.Outcome out = core.runOneShot(extras("waitForIdleTimeoutMs", "300"), sink);
        assertEquals("true", out.result.get("ok"));
        assertEquals("300", out.result.get("elapsedMs"));
    }

    @Test
    public void limitsAreReportedAsTruncated() {
        HelperCore.Outcome out = core.runOneShot(extras("maxNodes", "10", "maxDepth", "0"), sink);
        assertEquals("2", out.result.get("nodeCount"));
        assertEquals("true", out.result.get("truncated"));
    }

    @Test
    public void rootStabilisationRetriesOnlyWhileIncompleteAndStaysWithinItsBound() {
        device.incompleteAttempts = 3;
        HelperCore.Outcome out = core.runOneShot(extras("waitForIdleTimeoutMs", "0"), sink);
        assertEquals(4, device.acquisitions);
        assertEquals("150", out.result.get("elapsedMs"));
        assertEquals("true", out.result.get("rootPresent"));

        setUp();
        device.incompleteAttempts = 1000;
        HelperCore.Outcome gaveUp = core.runOneShot(extras("waitForIdleTimeoutMs", "0"), sink);
        assertEquals("500", gaveUp.result.get("elapsedMs"));
        assertEquals("false", gaveUp.result.get("rootPresent"));
        assertEquals("0", gaveUp.result.get("nodeCount"));
    }

    @Test
    public void completeCapturesPayNoStabilisationWait() {
        core.runOneShot(extras("waitForIdleTimeoutMs", "0"), sink);
        assertEquals(1, device.acquisitions);
    }

    @Test
    public void viewportIsTheActiveApplicationWindow() {
        HelperCore.Outcome out = core.runOneShot(extras("mode", "viewport"), sink);
        assertEquals(Protocol.RESULT_CODE_OK, out.code);
        assertEquals("viewport", out.result.get("kind"));
        assertEquals("0", out.result.get("x"));
        assertEquals("2400", out.result.get("height"));
        assertEquals("android-snapshot-helper-v1", out.result.get("agentDeviceProtocol"));
        assertTrue(statuses.isEmpty());
    }

    @Test
    public void gestureInjectsEachEventAtItsOffset() {
        HelperCore.Outcome out = core.runOneShot(extras("mode", "gesture", "payloadBase64",
                TouchPlanParserTest.b64(TouchPlanParserTest.SWIPE)), sink);
        assertEquals("true", out.result.get("ok"));
        assertEquals("swipe", out.result.get("kind"));
        assertEquals("3", out.result.get("injectedEvents"));
        assertEquals("300", out.result.get("elapsedMs"));
        assertEquals(3, device.injected.size());
        assertEquals(Long.valueOf(0), device.injectedAt.get(0));
        assertEquals(Long.valueOf(150), device.injectedAt.get(1));
        assertEquals(Long.valueOf(300), device.injectedAt.get(2));
        assertEquals(device.injectedAt, device.injectedEventTimes);
    }

    @Test
    public void failuresCarryErrorTypeAndMessage() {
        HelperCore.Outcome badOption = core.runOneShot(extras("maxDepth", "deep"), sink);
        assertEquals(Protocol.RESULT_CODE_ERROR, badOption.code);
        assertEquals("false", badOption.result.get("ok"));
        assertEquals("java.lang.NumberFormatException", badOption.result.get("errorType"));
        assertEquals("For input string: \"deep\"", badOption.result.get("message"));
        assertNull(badOption.result.get("maxDepth"));

        HelperCore.Outcome badMode = core.runOneShot(extras("mode", "record"), sink);
        assertEquals("java.lang.IllegalArgumentException", badMode.result.get("errorType"));
        assertEquals("Unsupported mode: record", badMode.result.get("message"));
        assertEquals("128", badMode.result.get("maxDepth"));

        HelperCore.Outcome noPayload = core.runOneShot(extras("mode", "gesture"), sink);
        assertEquals("Missing payloadBase64", noPayload.result.get("message"));

        device.roots.clear();
        HelperCore.Outcome noViewport = core.runOneShot(extras("mode", "viewport"), sink);
        assertEquals("java.lang.IllegalStateException", noViewport.result.get("errorType"));
        assertEquals("Active application interaction viewport is unavailable", noViewport.result.get("message"));
        assertTrue(device.injected.isEmpty());
    }

    @Test
    public void sessionPortStartsASessionAndBadPortsFail() {
        HelperCore.Outcome session = core.runOneShot(extras("sessionPort", "7912"), sink);
        assertEquals(7912, session.sessionPort);
        assertNull(session.result);
        HelperCore.Outcome tooBig = core.runOneShot(extras("sessionPort", "70000"), sink);
        assertEquals("Port value out of range: 70000", tooBig.result.get("message"));
        Fields ready = HelperCore.sessionReady(session.options, 7912);
        assertEquals("true", ready.get("sessionReady"));
        assertEquals("7912", ready.get("sessionPort"));
        assertEquals("true", HelperCore.sessionEnded(session.options).get("sessionEnded"));
    }

    @Test
    public void sessionCommands() {
        HelperOptions o = HelperOptions.defaults();
        SessionResponse snap = core.session("snapshot r1", o);
        assertEquals("r1", snap.headers.get("requestId"));
        assertEquals(String.valueOf(snap.body.length), snap.headers.get("byteLength"));
        assertTrue(snap.body.length > 2048);
        assertFalse(snap.quit);
        SessionResponse vp = core.session("viewport r2", o);
        assertEquals("1080", vp.headers.get("width"));
        assertEquals(0, vp.body.length);
        SessionResponse g = core.session("gesture r3 " + TouchPlanParserTest.b64(TouchPlanParserTest.PINCH), o);
        assertEquals("6", g.headers.get("injectedEvents"));
        assertEquals("transform", g.headers.get("kind"));
        SessionResponse unknown = core.session("dance r4", o);
        assertEquals("unknown session command", unknown.headers.get("message"));
        assertEquals("r4", unknown.headers.get("requestId"));
        SessionResponse empty = core.session(null, o);
        assertEquals("java.io.EOFException", empty.headers.get("errorType"));
        assertEquals("", empty.headers.get("requestId"));
        SessionResponse quit = core.session("quit r5", o);
        assertTrue(quit.quit);
        assertEquals("true", quit.headers.get("ok"));
    }
}
