package dev.devicebridge.glassagent.core;

import java.util.ArrayList;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;
import org.json.JSONTokener;

/**
 * The glass agent's line-delimited JSON protocol (seed 001). On connect the agent sends
 * {@link #HELLO}; then one response line per request line:
 *
 * <pre>
 * ping           id                          → id, ok:true
 * clipboard_get  id                          → id, ok:true, text
 * clipboard_set  id, text                    → id, ok:true
 * pointer        id, gesture [{x,y,t_ms}], button (accepted, reserved) → id, ok:true
 * key            id, chord ("ctrl+a", "shift+tab", "enter", "f5")      → id, ok:true
 * text           id, text                    → id, ok:true
 * </pre>
 *
 * A handler error or an unknown op: {"id":id,"ok":false,"error":"..."} and the connection stays
 * open. A line that is not a JSON object with an integer id: {"id":-1,"ok":false,"error":"malformed request"}.
 */
public final class AgentProtocol {
    public static final String HELLO = "{\"hello\":{\"proto\":1}}";
    public static final String MALFORMED = "{\"id\":-1,\"ok\":false,\"error\":\"malformed request\"}";

    private final Agent agent;

    public AgentProtocol(Agent agent) {
        this.agent = agent;
    }

    /** The reply line (without its newline) to one request line. */
    public String handle(String line) {
        JSONObject request;
        long id;
        try {
            JSONTokener tokener = new JSONTokener(line);
            Object value = tokener.nextValue();
            if (!(value instanceof JSONObject) || tokener.more()) return MALFORMED;
            request = (JSONObject) value;
            Long parsed = integer(request.opt("id"));
            if (parsed == null) return MALFORMED;
            id = parsed;
        } catch (JSONException e) {
            return MALFORMED;
        }
        try {
            JSONObject reply = new JSONObject().put("id", id).put("ok", true);
            String op = request.optString("op", null);
            if (op == null) throw new IllegalArgumentException("missing field: op");
            if ("ping".equals(op)) {
                // nothing else to say
            } else if ("clipboard_get".equals(op)) {
                String text = agent.clipboardGet();
                reply.put("text", text == null ? "" : text);
            } else if ("clipboard_set".equals(op)) {
                agent.clipboardSet(requiredString(request, "text"));
            } else if ("pointer".equals(op)) {
                agent.pointer(gesture(request.opt("gesture")), request.optString("button", null));
            } else if ("key".equals(op)) {
                agent.key(Chord.parse(requiredString(request, "chord")));
            } else if ("text".equals(op)) {
                agent.text(requiredString(request, "text"));
            } else {
                throw new IllegalArgumentException("unknown op: " + op);
            }
            return reply.toString();
        } catch (Exception e) {
            return error(id, e);
        }
    }

    static String error(long id, Exception e) {
        String message = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
        try {
            return new JSONObject().put("id", id).put("ok", false).put("error", message).toString();
        } catch (JSONException impossible) {
            return MALFORMED;
        }
    }

    private static String requiredString(JSONObject request, String key) {
        Object value = request.opt(key);
        if (!(value instanceof String)) throw new IllegalArgumentException("missing field: " + key + " (a string)");
        return (String) value;
    }

    /** gesture: a non-empty array of {x, y, t_ms}; t_ms integers from 0, never decreasing. */
    static List<PointerSample> gesture(Object value) {
        if (!(value instanceof JSONArray) || ((JSONArray) value).length() == 0) {
            throw new IllegalArgumentException("gesture must be a non-empty array of {x,y,t_ms}");
        }
        JSONArray array = (JSONArray) value;
        List<PointerSample> samples = new ArrayList<PointerSample>(array.length());
        long previous = 0;
        for (int i = 0; i < array.length(); i++) {
            Object item = array.opt(i);
            if (!(item instanceof JSONObject)) throw new IllegalArgumentException("gesture[" + i + "] must be {x,y,t_ms}");
            JSONObject o = (JSONObject) item;
            Double x = finite(o.opt("x"));
            Double y = finite(o.opt("y"));
            Long t = integer(o.opt("t_ms"));
            if (x == null || y == null) throw new IllegalArgumentException("gesture[" + i + "]: x and y must be finite numbers");
            if (t == null || t < 0) throw new IllegalArgumentException("gesture[" + i + "].t_ms must be an integer >= 0");
            if (t < previous) throw new IllegalArgumentException("gesture[" + i + "].t_ms must not decrease (" + t + " after " + previous + ")");
            previous = t;
            samples.add(new PointerSample(x, y, t));
        }
        return samples;
    }

    static Long integer(Object value) {
        // Ids and refs stay within what a JSON host can hold exactly (2^53 - 1), as JavaScript hosts read them.
        if (value instanceof Integer || value instanceof Long) {
            long v = ((Number) value).longValue();
            return Math.abs(v) <= 9007199254740991L ? Long.valueOf(v) : null;
        }
        if (value instanceof Double) {
            double d = (Double) value;
            if (d == Math.rint(d) && Math.abs(d) <= 9007199254740991.0) return (long) d;
        }
        return null;
    }

    static Double finite(Object value) {
        if (!(value instanceof Number)) return null;
        double d = ((Number) value).doubleValue();
        return Double.isNaN(d) || Double.isInfinite(d) ? null : d;
    }
}
