package dev.devicebridge.glassa11y.core;

import java.util.ArrayList;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;

/**
 * A node tree as seed 001's tree object: {"ref":N, "class":…, "text"?:…, "desc"?:…,
 * "bounds":{"x","y","w","h"}, "editable", "clickable", "enabled", "scrollable", "children"?:[…]},
 * refs in pre-order from 0 at the root. The nodes by ref are kept for actions.
 */
public final class TreeSerializer {
    /** Deepest nesting serialized; deeper nodes are left out (accessibility trees are far shallower). */
    public static final int MAX_DEPTH = 256;

    public final JSONObject tree;
    public final List<A11yNode> byRef;

    private TreeSerializer(JSONObject tree, List<A11yNode> byRef) {
        this.tree = tree;
        this.byRef = byRef;
    }

    public static TreeSerializer serialize(A11yNode root) throws JSONException {
        List<A11yNode> refs = new ArrayList<A11yNode>();
        JSONObject tree = node(root, refs, 0);
        return new TreeSerializer(tree, refs);
    }

    private static JSONObject node(A11yNode n, List<A11yNode> refs, int depth) throws JSONException {
        JSONObject o = new JSONObject();
        o.put("ref", refs.size());
        refs.add(n);
        o.put("class", n.className() == null ? "" : n.className());
        String text = n.text();
        if (text != null && !text.isEmpty()) o.put("text", text);
        String desc = n.contentDesc();
        if (desc != null && !desc.isEmpty()) o.put("desc", desc);
        int[] b = n.bounds();
        o.put("bounds", new JSONObject().put("x", b[0]).put("y", b[1]).put("w", b[2]).put("h", b[3]));
        o.put("editable", n.editable());
        o.put("clickable", n.clickable());
        o.put("enabled", n.enabled());
        o.put("scrollable", n.scrollable());
        if (depth < MAX_DEPTH) {
            JSONArray children = new JSONArray();
            for (int i = 0; i < n.childCount(); i++) {
                A11yNode child = n.child(i);
                if (child != null) children.put(node(child, refs, depth + 1));
            }
            if (children.length() > 0) o.put("children", children);
        }
        return o;
    }
}
