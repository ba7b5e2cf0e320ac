package dev.devicebridge.glassa11y.core;

import java.util.List;
import org.json.JSONException;
import org.json.JSONObject;
import org.json.JSONTokener;

/**
 * The a11y service's line-delimited JSON protocol on one connection (seed 001):
 *
 * <pre>
 * ping    id                              → id, ok:true
 * tree    id, package (the active window is served regardless) → id, ok:true, tree, package?
 * action  id, ref, action ("set_text" | "click"), text (for set_text) → id, ok:true
 * </pre>
 *
 * An action is refused without a tree served on this connection; when the served window or the
 * window active now has no package name (it cannot be confirmed to be the same window); and when
 * the two packages differ (the ref names a node of the served window, which may have changed apps).
 * Errors and malformed lines are answered as the agent answers them.
 */
public final class A11yProtocol {
    public static final String HELLO = "{\"hello\":{\"proto\":1}}";
    public static final String MALFORMED = "{\"id\":-1,\"ok\":false,\"error\":\"malformed request\"}";

    private final A11yHost host;
    private List<A11yNode> servedRefs;
    private String servedPackage;

    /** One instance per connection: the served tree belongs to it. */
    public A11yProtocol(A11yHost host) {
        this.host = host;
    }

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
                return reply.toString();
            }
            if ("tree".equals(op)) {
                if (!(request.opt("package") instanceof String)) {
                    throw new IllegalArgumentException("missing field: package (a string)");
                }
                A11yHost.Window window = host.activeWindow();
                if (window == null || window.root == null) throw new IllegalStateException("no active window");
                TreeSerializer serialized = TreeSerializer.serialize(window.root);
                servedRefs = serialized.byRef;
                servedPackage = window.packageName;
                reply.put("tree", serialized.tree);
                if (window.packageName != null) reply.put("package", window.packageName);
                return reply.toString();
            }
            if ("action".equals(op)) {
                action(request);
                return reply.toString();
            }
            throw new IllegalArgumentException("unknown op: " + op);
        } catch (Exception e) {
            String message = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
            try {
                return new JSONObject().put("id", id).put("ok", false).put("error", message).toString();
            } catch (JSONException impossible) {
                return MALFORMED;
            }
        }
    }

    private void action(JSONObject request) throws Exception {
        Long ref = integer(request.opt("ref"));
        if (ref == null) throw new IllegalArgumentException("missing field: ref (an integer)");
        Object actionValue = request.opt("action");
        if (!"set_text".equals(actionValue) && !"click".equals(actionValue)) {
            throw new IllegalArgumentException("action must be \"set_text\" or \"click\"");
        }
        String action = (String) actionValue;
        Object text = request.opt("text");
        if ("set_text".equals(action) && !(text instanceof String)) {
            throw new IllegalArgumentException("missing field: text (a string, for set_text)");
        }
        if (servedRefs == null) throw new IllegalStateException("no tree has been served on this connection");
        A11yHost.Window now = host.activeWindow();
        String current = now == null ? null : now.packageName;
        if (servedPackage == null || current == null) {
            throw new IllegalStateException("cannot confirm the window: "
                    + (servedPackage == null ? "the served tree's window" : "the active window") + " has no package name");
        }
        if (!servedPackage.equals(current)) {
            throw new IllegalStateException("the active window changed since the tree was served (served "
                    + servedPackage + ", now " + current + ")");
        }
        if (ref < 0 || ref >= servedRefs.size()) throw new IllegalArgumentException("unknown ref " + ref);
        if (!host.perform(servedRefs.get((int) (long) ref), action, (String) text)) {
            throw new IllegalStateException(action + " was refused by ref " + ref);
        }
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
}
