package dev.devicebridge.glassa11y.core;

import dev.devicebridge.glass.common.JsonLineProtocol;
import java.util.List;
import org.json.JSONObject;

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
 * Banner, ids, errors and malformed lines follow {@link JsonLineProtocol}, shared with the agent.
 */
public final class A11yProtocol extends JsonLineProtocol {
    private final A11yHost host;
    private List<A11yNode> servedRefs;
    private String servedPackage;

    /** One instance per connection: the served tree belongs to it. */
    public A11yProtocol(A11yHost host) {
        this.host = host;
    }

    @Override
    protected void dispatch(String op, JSONObject request, JSONObject reply) throws Exception {
        if ("ping".equals(op)) {
            // nothing else to say
        } else if ("tree".equals(op)) {
            requiredString(request, "package");
            A11yHost.Window window = host.activeWindow();
            if (window == null || window.root == null) throw new IllegalStateException("no active window");
            TreeSerializer serialized = TreeSerializer.serialize(window.root);
            servedRefs = serialized.byRef;
            servedPackage = window.packageName;
            reply.put("tree", serialized.tree);
            if (window.packageName != null) reply.put("package", window.packageName);
        } else if ("action".equals(op)) {
            action(request);
        } else {
            throw unknownOp(op);
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
}
