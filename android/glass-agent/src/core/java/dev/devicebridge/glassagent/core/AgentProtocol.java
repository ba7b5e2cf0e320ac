package dev.devicebridge.glassagent.core;

import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.glass.common.LineServer;
import java.util.ArrayList;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;

/**
 * The glass agent's line-delimited JSON protocol (seed 001). On connect the agent sends
 * {@link #HELLO}; then one response line per request line:
 *
 * <pre>
 * ping           id                          → id, ok:true
 * clipboard_get  id                          → id, ok:true, text
 * clipboard_set  id, text                    → id, ok:true
 * pointer        id, gesture [{x,y,t_ms}], button (accepted, reserved) → id, ok:true
 * touch          id, action ("down", "move", "up", "cancel"), x, y (not for cancel) → id, ok:true
 * key            id, chord ("ctrl+a", "shift+tab", "enter", "f5")      → id, ok:true
 * text           id, text                    → id, ok:true
 * </pre>
 *
 * Banner, ids, errors and malformed lines follow {@link JsonLineProtocol}, shared with the a11y service.
 * {@code touch} extends the glass contract's ops: a streamed touch ({@link TouchStream}), one per
 * connection, so one protocol instance serves one connection; a finger still down when the
 * connection ends is cancelled ({@link #connectionEnded}). An agent without the op answers it as
 * any unknown op, and the bridge falls back to one {@code pointer} gesture on up.
 */
public final class AgentProtocol extends JsonLineProtocol implements LineServer.ConnectionHandler {
    private final Agent agent;
    private final TouchStream touch;

    public AgentProtocol(Agent agent) {
        this.agent = agent;
        this.touch = new TouchStream(agent);
    }

    /** The connection ended: a finger it left down is released (best effort: nobody is left to tell). */
    @Override
    public void connectionEnded() {
        try {
            touch.release();
        } catch (Exception refused) {
            // The device refused the CANCEL too; nothing more can be done from here.
        }
    }

    @Override
    protected void dispatch(String op, JSONObject request, JSONObject reply) throws Exception {
        if ("ping".equals(op)) {
            // nothing else to say
        } else if ("clipboard_get".equals(op)) {
            String text = agent.clipboardGet();
            reply.put("text", text == null ? "" : text);
        } else if ("clipboard_set".equals(op)) {
            agent.clipboardSet(requiredString(request, "text"));
        } else if ("pointer".equals(op)) {
            agent.pointer(gesture(request.opt("gesture")), request.optString("button", null));
        } else if ("touch".equals(op)) {
            touch.handle(requiredString(request, "action"), finite(request.opt("x")), finite(request.opt("y")));
        } else if ("key".equals(op)) {
            agent.key(Chord.parse(requiredString(request, "chord")));
        } else if ("text".equals(op)) {
            agent.text(requiredString(request, "text"));
        } else {
            throw unknownOp(op);
        }
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

    static Double finite(Object value) {
        if (!(value instanceof Number)) return null;
        double d = ((Number) value).doubleValue();
        return Double.isNaN(d) || Double.isInfinite(d) ? null : d;
    }
}
