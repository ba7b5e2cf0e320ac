package dev.devicebridge.snapshothelper.core;

import dev.devicebridge.json.StrictJson;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;

/**
 * Parses and validates an android-touch-plan-v1 payload (the snapshot helper contract, "One-Shot Modes"): base64
 * (surrounding spaces, tabs and newlines ignored) → UTF-8 (a byte order mark is not skipped) →
 * strict JSON ({@link StrictJson}: RFC 8259, whitespace around the object allowed) → rules. Every
 * rule is checked and every failure reported with a dotted path
 * ({@code pointers.1.samples.3.offsetMs}), joined with "; " into one IllegalArgumentException, in
 * the same words as the bridge's validator (src/protocol/helper/touch-plan.ts), values shown as it
 * shows them. test/fixtures/touch-plans.json holds payloads and the plan or message both give.
 */
public final class TouchPlanParser {
    private final List<String> errors = new ArrayList<String>();

    private TouchPlanParser() {}

    /** @throws IllegalArgumentException naming every rule the payload breaks */
    public static TouchPlan parseBase64(String payloadBase64) {
        if (payloadBase64 == null || Base64Codec.stripSpace(payloadBase64).isEmpty()) {
            throw new IllegalArgumentException("payloadBase64 is empty");
        }
        byte[] bytes = Base64Codec.decode(payloadBase64);
        String json;
        try {
            json = Charset.forName("UTF-8").newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("payloadBase64 does not decode to UTF-8 text");
        }
        return parseJson(json);
    }

    /** @throws IllegalArgumentException naming every rule the JSON text breaks */
    public static TouchPlan parseJson(String json) {
        Object value;
        try {
            value = StrictJson.parse(json);
        } catch (StrictJson.Failure e) {
            String message = e.getMessage();
            throw new IllegalArgumentException("payload is not valid JSON: "
                    + (message.startsWith("JSON: ") ? message.substring(6) : message));
        }
        return validate(value);
    }

    /** @throws IllegalArgumentException naming every rule the value breaks */
    public static TouchPlan validate(Object input) {
        TouchPlanParser p = new TouchPlanParser();
        TouchPlan plan = p.check(input);
        if (!p.errors.isEmpty() || plan == null) {
            StringBuilder message = new StringBuilder();
            for (String e : p.errors) {
                if (message.length() > 0) message.append("; ");
                message.append(e);
            }
            throw new IllegalArgumentException(message.toString());
        }
        return plan;
    }

    private void fail(String path, String message) {
        errors.add(path.isEmpty() ? message : path + ": " + message);
    }

    private TouchPlan check(Object input) {
        if (!(input instanceof JSONObject)) {
            fail("", "touch plan must be a JSON object, " + describe(input, input == null));
            return null;
        }
        JSONObject o = (JSONObject) input;
        if (o.has("protocol") && !PROTOCOL_EQ(o.opt("protocol"))) {
            fail("protocol", "must be " + TouchPlan.PROTOCOL + " when present, " + describe(o, "protocol"));
        }
        Object kindValue = o.opt("kind");
        String kind = "swipe".equals(kindValue) || "transform".equals(kindValue) ? (String) kindValue : null;
        if (kind == null) {
            fail("kind", "must be swipe (one pointer) or transform (two pointers), " + describe(o, "kind"));
        }
        Long durationMs = integer(o.opt("durationMs"));
        if (durationMs == null || durationMs < 0 || durationMs > TouchPlan.MAX_DURATION_MS) {
            fail("durationMs", "must be an integer, 0-" + TouchPlan.MAX_DURATION_MS + ", " + describe(o, "durationMs"));
            durationMs = null;
        }
        Object pointersValue = o.opt("pointers");
        List<TouchPlan.Pointer> pointers = new ArrayList<TouchPlan.Pointer>();
        if (!(pointersValue instanceof JSONArray)) {
            fail("pointers", "must be an array of { pointerId, samples }, " + describe(o, "pointers"));
        } else {
            JSONArray array = (JSONArray) pointersValue;
            if ("swipe".equals(kind) && array.length() != 1) {
                fail("pointers", "swipe requires exactly one pointer, got " + array.length());
            } else if ("transform".equals(kind) && array.length() != 2) {
                fail("pointers", "transform requires exactly two pointers, got " + array.length());
            }
            for (int p = 0; p < array.length(); p++) {
                TouchPlan.Pointer pointer = pointer(array.opt(p), p, durationMs);
                if (pointer != null) pointers.add(pointer);
            }
            if ("transform".equals(kind) && array.length() == 2 && pointers.size() == 2) {
                sharedOffsets(pointers.get(0), pointers.get(1));
            }
        }
        if (!errors.isEmpty() || kind == null || durationMs == null) return null;
        return new TouchPlan(kind, durationMs, pointers);
    }

    private static boolean PROTOCOL_EQ(Object value) {
        return TouchPlan.PROTOCOL.equals(value);
    }

    private TouchPlan.Pointer pointer(Object value, int p, Long durationMs) {
        String base = "pointers." + p;
        if (!(value instanceof JSONObject)) {
            fail(base, "must be an object { pointerId, samples }, " + describe(value, false));
            return null;
        }
        JSONObject o = (JSONObject) value;
        boolean ok = true;
        Long pointerId = integer(o.opt("pointerId"));
        if (pointerId == null || pointerId != p) {
            fail(base + ".pointerId", "pointerIds must be ordered from 0 (expected " + p + "), " + describe(o, "pointerId"));
            ok = false;
        }
        Object samplesValue = o.opt("samples");
        if (!(samplesValue instanceof JSONArray)) {
            fail(base + ".samples", "must be an array of { offsetMs, x, y }, " + describe(o, "samples"));
            return null;
        }
        JSONArray samplesArray = (JSONArray) samplesValue;
        if (samplesArray.length() < 2) {
            fail(base + ".samples", "must have at least two entries, got " + samplesArray.length());
            ok = false;
        }
        List<TouchPlan.Sample> samples = new ArrayList<TouchPlan.Sample>();
        Long previous = null;
        int last = samplesArray.length() - 1;
        for (int s = 0; s <= last; s++) {
            String path = base + ".samples." + s;
            Object sampleValue = samplesArray.opt(s);
            if (!(sampleValue instanceof JSONObject)) {
                fail(path, "must be an object { offsetMs, x, y }, " + describe(sampleValue, false));
                ok = false;
                previous = null;
                continue;
            }
            JSONObject sample = (JSONObject) sampleValue;
            boolean sampleOk = true;
            Long offsetMs = integer(sample.opt("offsetMs"));
            if (offsetMs == null) {
                fail(path + ".offsetMs", "must be an integer, " + describe(sample, "offsetMs"));
                sampleOk = false;
            } else {
                if (s == 0 && offsetMs != 0) {
                    fail(path + ".offsetMs", "the first sample's offsetMs must be 0, got " + offsetMs);
                    sampleOk = false;
                }
                if (previous != null) {
                    if (offsetMs < previous) {
                        fail(path + ".offsetMs", "offsetMs values must be strictly increasing, got " + offsetMs + " after " + previous);
                        sampleOk = false;
                    } else if (offsetMs.longValue() == previous.longValue() && (durationMs == null || durationMs != 0)) {
                        fail(path + ".offsetMs", "offsetMs values must be strictly increasing (equal offsets are only"
                                + " allowed when durationMs is 0), got " + offsetMs + " twice");
                        sampleOk = false;
                    }
                }
                if (s == last && s > 0 && durationMs != null && offsetMs.longValue() != durationMs.longValue()) {
                    fail(path + ".offsetMs", "the last sample's offsetMs must equal durationMs (" + durationMs + "), got " + offsetMs);
                    sampleOk = false;
                }
            }
            Double x = finite(sample.opt("x"));
            if (x == null) {
                fail(path + ".x", "must be a finite number, " + describe(sample, "x"));
                sampleOk = false;
            }
            Double y = finite(sample.opt("y"));
            if (y == null) {
                fail(path + ".y", "must be a finite number, " + describe(sample, "y"));
                sampleOk = false;
            }
            previous = offsetMs;
            if (!sampleOk) ok = false;
            else samples.add(new TouchPlan.Sample(offsetMs, x, y));
        }
        return ok ? new TouchPlan.Pointer(p, samples) : null;
    }

    private void sharedOffsets(TouchPlan.Pointer first, TouchPlan.Pointer second) {
        if (first.samples.size() != second.samples.size()) {
            fail("pointers.1.samples", "both transform pointers must share the same offsetMs sequence ("
                    + first.samples.size() + " samples vs " + second.samples.size() + ")");
            return;
        }
        for (int s = 0; s < first.samples.size(); s++) {
            long a = first.samples.get(s).offsetMs;
            long b = second.samples.get(s).offsetMs;
            if (a != b) {
                fail("pointers.1.samples." + s + ".offsetMs", "both transform pointers must share the same offsetMs"
                        + " sequence (pointer 0 has " + a + "), got " + b);
            }
        }
    }

    /** A JSON number with an integral value (1 and 1.0 alike), else null. Strings never count. */
    static Long integer(Object value) {
        if (value instanceof Integer || value instanceof Long) return ((Number) value).longValue();
        if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) <= 9007199254740991.0) return (long) d;
        }
        return null;
    }

    static Double finite(Object value) {
        if (!(value instanceof Number)) return null;
        double d = ((Number) value).doubleValue();
        return Double.isNaN(d) || Double.isInfinite(d) ? null : d;
    }

    private static String describe(JSONObject o, String key) {
        return o.has(key) ? describe(o.opt(key), false) : "missing";
    }

    /** A value as the bridge's messages show it (describeValue): "got 1.5", "got \"x\"", "got an array". */
    private static String describe(Object value, boolean missing) {
        if (missing) return "missing";
        if (value == null || value == JSONObject.NULL) return "got null";
        if (value instanceof String) return "got " + StrictJson.describe((String) value);
        if (value instanceof Boolean) return "got " + value;
        if (value instanceof Number) return "got " + StrictJson.jsNumber(((Number) value).doubleValue());
        if (value instanceof JSONArray) return "got an array";
        return "got an object";
    }
}
