package dev.devicebridge.snapshothelper.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.devicebridge.json.Fixtures;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.Test;

public class TouchPlanParserTest {
    static String b64(String json) {
        return Base64Codec.encode(json.getBytes(StandardCharsets.UTF_8));
    }

    static final String SWIPE = "{\"protocol\":\"android-touch-plan-v1\",\"kind\":\"swipe\",\"durationMs\":300,\"pointers\":["
            + "{\"pointerId\":0,\"samples\":[{\"offsetMs\":0,\"x\":100,\"y\":200.5},{\"offsetMs\":150,\"x\":150,\"y\":250},"
            + "{\"offsetMs\":300,\"x\":200,\"y\":300}]}]}";

    static final String PINCH = "{\"kind\":\"transform\",\"durationMs\":100,\"pointers\":["
            + "{\"pointerId\":0,\"samples\":[{\"offsetMs\":0,\"x\":10,\"y\":10},{\"offsetMs\":50,\"x\":20,\"y\":20},{\"offsetMs\":100,\"x\":30,\"y\":30}]},"
            + "{\"pointerId\":1,\"samples\":[{\"offsetMs\":0,\"x\":90,\"y\":90},{\"offsetMs\":50,\"x\":80,\"y\":80},{\"offsetMs\":100,\"x\":70,\"y\":70}]}]}";

    private static String error(String json) {
        try {
            TouchPlanParser.parseBase64(b64(json));
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        fail("accepted " + json);
        return null;
    }

    @Test
    public void parsesSwipeAndTransform() {
        TouchPlan swipe = TouchPlanParser.parseBase64(b64(SWIPE));
        assertEquals("swipe", swipe.kind);
        assertEquals(300, swipe.durationMs);
        assertEquals(3, swipe.pointers.get(0).samples.size());
        assertEquals(200.5, swipe.pointers.get(0).samples.get(0).y, 0);
        TouchPlan pinch = TouchPlanParser.parseBase64(b64(PINCH));
        assertEquals("transform", pinch.kind);
        assertEquals(2, pinch.pointers.size());
        assertEquals(70, pinch.pointers.get(1).samples.get(2).x, 0);
    }

    @Test
    public void equalOffsetsOnlyWithZeroDurationAndUnknownFieldsIgnored() {
        TouchPlan tap = TouchPlanParser.parseJson("{\"kind\":\"swipe\",\"durationMs\":0,\"extra\":true,\"pointers\":[{\"pointerId\":0,"
                + "\"samples\":[{\"offsetMs\":0,\"x\":1,\"y\":2},{\"offsetMs\":0,\"x\":1,\"y\":2}]}]}");
        assertEquals(0, tap.durationMs);
        assertEquals("pointers.0.samples.2.offsetMs: offsetMs values must be strictly increasing (equal offsets are only"
                + " allowed when durationMs is 0), got 50 twice",
                error("{\"kind\":\"swipe\",\"durationMs\":50,\"pointers\":[{\"pointerId\":0,\"samples\":"
                        + "[{\"offsetMs\":0,\"x\":1,\"y\":2},{\"offsetMs\":50,\"x\":1,\"y\":2},{\"offsetMs\":50,\"x\":1,\"y\":2}]}]}"));
    }

    @Test
    public void reportsEveryRuleWithItsPath() {
        assertEquals("touch plan must be a JSON object, got an array", error("[]"));
        assertEquals("protocol: must be android-touch-plan-v1 when present, got \"v2\"; "
                + "kind: must be swipe (one pointer) or transform (two pointers), got \"tap\"; "
                + "durationMs: must be an integer, 0-120000, got 120001; "
                + "pointers: must be an array of { pointerId, samples }, missing",
                error("{\"protocol\":\"v2\",\"kind\":\"tap\",\"durationMs\":120001}"));
        assertEquals("pointers: swipe requires exactly one pointer, got 2",
                error("{\"kind\":\"swipe\",\"durationMs\":0,\"pointers\":[{\"pointerId\":0,\"samples\":[{\"offsetMs\":0,\"x\":1,\"y\":1},"
                        + "{\"offsetMs\":0,\"x\":1,\"y\":1}]},{\"pointerId\":1,\"samples\":[{\"offsetMs\":0,\"x\":1,\"y\":1},{\"offsetMs\":0,\"x\":1,\"y\":1}]}]}"));
        assertEquals("pointers.0.pointerId: pointerIds must be ordered from 0 (expected 0), got 1; "
                + "pointers.0.samples: must have at least two entries, got 1; "
                + "pointers.0.samples.0.offsetMs: the first sample's offsetMs must be 0, got 5; "
                + "pointers.0.samples.0.x: must be a finite number, got \"1\"",
                error("{\"kind\":\"swipe\",\"durationMs\":5,\"pointers\":[{\"pointerId\":1,\"samples\":[{\"offsetMs\":5,\"x\":\"1\",\"y\":1}]}]}"));
        assertEquals("pointers.0.samples.2.offsetMs: offsetMs values must be strictly increasing, got 10 after 20; "
                + "pointers.0.samples.2.offsetMs: the last sample's offsetMs must equal durationMs (30), got 10",
                error("{\"kind\":\"swipe\",\"durationMs\":30,\"pointers\":[{\"pointerId\":0,\"samples\":[{\"offsetMs\":0,\"x\":1,\"y\":1},"
                        + "{\"offsetMs\":20,\"x\":1,\"y\":1},{\"offsetMs\":10,\"x\":1,\"y\":1}]}]}"));
        assertEquals("pointers.1.samples.1.offsetMs: both transform pointers must share the same offsetMs sequence"
                + " (pointer 0 has 50), got 60", error(PINCH.replace("{\"offsetMs\":50,\"x\":80", "{\"offsetMs\":60,\"x\":80")));
    }

    @Test
    public void rejectsBadEnvelopes() {
        assertEquals("payloadBase64 is empty", message(" "));
        assertEquals("payloadBase64 is not valid base64", message("e30"));
        assertEquals("payloadBase64 does not decode to UTF-8 text", message(Base64Codec.encode(new byte[] {(byte) 0xff, 0x7b})));
        String notJson = message(b64("{\"kind\":"));
        assertEquals(true, notJson.startsWith("payload is not valid JSON: "));
    }

    private static String message(String payload) {
        try {
            TouchPlanParser.parseBase64(payload);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        fail("accepted " + payload);
        return null;
    }

    /**
     * test/fixtures/touch-plans.json: every payload gives the plan or the message the bridge's
     * validator gives (the vitest tests run the same payloads).
     */
    @Test
    public void answersTheSharedPayloadsAsTheBridgeDoes() throws Exception {
        List<JSONObject> cases = Fixtures.objects(Fixtures.json("touch-plans.json"), "cases");
        assertTrue(cases.size() > 40);
        for (JSONObject c : cases) {
            String name = c.getString("name");
            String payload = c.getString("payloadBase64");
            if (c.has("error")) {
                assertEquals(name, c.getString("error"), message(payload));
                continue;
            }
            TouchPlan plan = TouchPlanParser.parseBase64(payload);
            JSONObject want = c.getJSONObject("plan");
            assertEquals(name, want.getString("kind"), plan.kind);
            assertEquals(name, want.getLong("durationMs"), plan.durationMs);
            JSONArray pointers = want.getJSONArray("pointers");
            assertEquals(name, pointers.length(), plan.pointers.size());
            for (int p = 0; p < pointers.length(); p++) {
                JSONObject pointer = pointers.getJSONObject(p);
                assertEquals(name, pointer.getInt("pointerId"), plan.pointers.get(p).pointerId);
                JSONArray samples = pointer.getJSONArray("samples");
                assertEquals(name, samples.length(), plan.pointers.get(p).samples.size());
                for (int i = 0; i < samples.length(); i++) {
                    JSONObject sample = samples.getJSONObject(i);
                    TouchPlan.Sample got = plan.pointers.get(p).samples.get(i);
                    assertEquals(name, sample.getLong("offsetMs"), got.offsetMs);
                    assertEquals(name, sample.getDouble("x"), got.x, 0);
                    assertEquals(name, sample.getDouble("y"), got.y, 0);
                }
            }
        }
    }
}
