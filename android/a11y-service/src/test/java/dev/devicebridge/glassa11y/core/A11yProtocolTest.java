package dev.devicebridge.glassa11y.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.json.Fixtures;
import java.util.ArrayList;
import java.util.List;
import org.json.JSONObject;
import org.junit.Test;

public class A11yProtocolTest {
    static final class Node implements A11yNode {
        final String cls;
        String text;
        String desc;
        boolean editable;
        boolean clickable;
        boolean enabled = true;
        boolean scrollable;
        final int[] bounds;
        final List<Node> children = new ArrayList<Node>();

        Node(String cls, int x, int y, int w, int h) {
            this.cls = cls;
            this.bounds = new int[] {x, y, w, h};
        }

        Node add(Node child) {
            children.add(child);
            return this;
        }

        @Override public String className() { return cls; }
        @Override public String text() { return text; }
        @Override public String contentDesc() { return desc; }
        @Override public int[] bounds() { return bounds; }
        @Override public boolean editable() { return editable; }
        @Override public boolean clickable() { return clickable; }
        @Override public boolean enabled() { return enabled; }
        @Override public boolean scrollable() { return scrollable; }
        @Override public int childCount() { return children.size(); }
        @Override public A11yNode child(int index) { return children.get(index); }
    }

    static final class Host implements A11yHost {
        Window window;
        final List<String> performed = new ArrayList<String>();
        boolean refuse;
        final List<A11yNode> targets = new ArrayList<A11yNode>();

        @Override public Window activeWindow() { return window; }

        @Override
        public boolean perform(A11yNode node, String action, String text) {
            if (refuse) return false;
            targets.add(node);
            performed.add(action + (text == null ? "" : ":" + text));
            return true;
        }
    }

    private final Node field = new Node("android.widget.EditText", 10, 100, 500, 80);
    private final Node button = new Node("android.widget.Button", 10, 200, 200, 60);
    private final Host host = new Host();
    private final A11yProtocol protocol = new A11yProtocol(host);

    public A11yProtocolTest() {
        field.editable = true;
        field.text = "h\u00e9llo";
        button.clickable = true;
        button.desc = "Send \ud83d\ude80";
        Node column = new Node("android.widget.LinearLayout", 0, 80, 1080, 300).add(field).add(button);
        Node root = new Node("android.widget.FrameLayout", 0, 0, 1080, 2400).add(column);
        column.scrollable = true;
        host.window = new A11yHost.Window("com.example.app", root);
    }

    @Test
    public void treeHasPreorderRefsBoundsAndFlagsAndNamesTheServedPackage() throws Exception {
        JSONObject reply = new JSONObject(protocol.handle("{\"id\":1,\"op\":\"tree\",\"package\":\"com.other\"}"));
        assertEquals(1, reply.getInt("id"));
        assertTrue(reply.getBoolean("ok"));
        assertEquals("com.example.app", reply.getString("package"));
        JSONObject root = reply.getJSONObject("tree");
        assertEquals(0, root.getInt("ref"));
        assertEquals("android.widget.FrameLayout", root.getString("class"));
        assertTrue(!root.has("text") && !root.has("desc"));
        JSONObject column = root.getJSONArray("children").getJSONObject(0);
        assertEquals(1, column.getInt("ref"));
        assertTrue(column.getBoolean("scrollable"));
        JSONObject f = column.getJSONArray("children").getJSONObject(0);
        JSONObject b = column.getJSONArray("children").getJSONObject(1);
        assertEquals(2, f.getInt("ref"));
        assertEquals(3, b.getInt("ref"));
        assertEquals("h\u00e9llo", f.getString("text"));
        assertTrue(f.getBoolean("editable"));
        assertEquals("Send \ud83d\ude80", b.getString("desc"));
        assertEquals("{\"x\":10,\"y\":200,\"w\":200,\"h\":60}", b.getJSONObject("bounds").toString());
        assertTrue(!b.has("children"));
        // Field order on the wire: id, ok, tree (ref, class, text?, desc?, bounds, flags, children?), package.
        String line = protocol.handle("{\"id\":1,\"op\":\"tree\",\"package\":\"x\"}");
        assertTrue(line, line.startsWith("{\"id\":1,\"ok\":true,\"tree\":{\"ref\":0,\"class\":\"android.widget.FrameLayout\",\"bounds\":{\"x\":0,"));
        assertTrue(line, line.endsWith("}]}]},\"package\":\"com.example.app\"}"));
    }

    @Test
    public void actionsNeedATreeServedOnThisConnection() throws Exception {
        String refused = protocol.handle("{\"id\":2,\"op\":\"action\",\"ref\":2,\"action\":\"set_text\",\"text\":\"hi\"}");
        assertEquals("{\"id\":2,\"ok\":false,\"error\":\"no tree has been served on this connection\"}", refused);
        protocol.handle("{\"id\":3,\"op\":\"tree\",\"package\":\"com.example.app\"}");
        assertEquals("{\"id\":4,\"ok\":true}", protocol.handle("{\"id\":4,\"op\":\"action\",\"ref\":2,\"action\":\"set_text\",\"text\":\"\u4f60\u597d\"}"));
        assertEquals("{\"id\":5,\"ok\":true}", protocol.handle("{\"id\":5,\"op\":\"action\",\"ref\":3,\"action\":\"click\"}"));
        assertEquals(2, host.performed.size());
        assertEquals("set_text:\u4f60\u597d", host.performed.get(0));
        assertTrue(host.targets.get(0) == field && host.targets.get(1) == button);
        // Another connection has its own state.
        A11yProtocol other = new A11yProtocol(host);
        assertTrue(other.handle("{\"id\":6,\"op\":\"action\",\"ref\":2,\"action\":\"click\"}").contains("no tree has been served"));
    }

    @Test
    public void actionsAreRefusedWhenTheWindowCannotBeConfirmedOrChangedApps() {
        protocol.handle("{\"id\":1,\"op\":\"tree\",\"package\":\"com.example.app\"}");
        A11yHost.Window served = host.window;
        host.window = new A11yHost.Window("com.evil", served.root);
        assertEquals("{\"id\":2,\"ok\":false,\"error\":\"the active window changed since the tree was served (served com.example.app, now com.evil)\"}",
                protocol.handle("{\"id\":2,\"op\":\"action\",\"ref\":3,\"action\":\"click\"}"));
        host.window = new A11yHost.Window(null, served.root);
        assertTrue(protocol.handle("{\"id\":3,\"op\":\"action\",\"ref\":3,\"action\":\"click\"}")
                .contains("cannot confirm the window: the active window has no package name"));
        // A tree served from an unnamed window never allows actions, and carries no package.
        String tree = protocol.handle("{\"id\":4,\"op\":\"tree\",\"package\":\"com.example.app\"}");
        assertTrue(tree, !tree.contains("\"package\""));
        host.window = served;
        assertTrue(protocol.handle("{\"id\":5,\"op\":\"action\",\"ref\":3,\"action\":\"click\"}")
                .contains("cannot confirm the window: the served tree's window has no package name"));
        assertTrue(host.performed.isEmpty());
    }

    @Test
    public void badActionsAndRequests() {
        protocol.handle("{\"id\":1,\"op\":\"tree\",\"package\":\"com.example.app\"}");
        assertTrue(protocol.handle("{\"id\":2,\"op\":\"action\",\"ref\":99,\"action\":\"click\"}").contains("unknown ref 99"));
        assertTrue(protocol.handle("{\"id\":3,\"op\":\"action\",\"ref\":1,\"action\":\"swipe\"}")
                .contains("action must be \\\"set_text\\\" or \\\"click\\\""));
        assertTrue(protocol.handle("{\"id\":4,\"op\":\"action\",\"ref\":2,\"action\":\"set_text\"}").contains("missing field: text"));
        assertTrue(protocol.handle("{\"id\":5,\"op\":\"action\",\"action\":\"click\"}").contains("missing field: ref"));
        host.refuse = true;
        assertEquals("{\"id\":6,\"ok\":false,\"error\":\"click was refused by ref 3\"}",
                protocol.handle("{\"id\":6,\"op\":\"action\",\"ref\":3,\"action\":\"click\"}"));
        assertEquals("{\"id\":7,\"ok\":true}", protocol.handle("{\"id\":7,\"op\":\"ping\"}"));
        assertEquals("{\"id\":8,\"ok\":false,\"error\":\"unknown op: dump\"}", protocol.handle("{\"id\":8,\"op\":\"dump\"}"));
        assertTrue(protocol.handle("{\"id\":9,\"op\":\"tree\"}").contains("missing field: package"));
        assertEquals(JsonLineProtocol.MALFORMED, protocol.handle("{\"op\":\"ping\"}"));
        assertEquals(JsonLineProtocol.MALFORMED, protocol.handle("nope"));
        host.window = null;
        assertEquals("{\"id\":10,\"ok\":false,\"error\":\"no active window\"}", protocol.handle("{\"id\":10,\"op\":\"tree\",\"package\":\"a\"}"));
    }

    /**
     * test/fixtures/contract/glass/lines.json: what is malformed (and what is not) exactly as the
     * simulator's a11y service answers it; the vitest tests run the same lines.
     */
    @Test
    public void answersTheSharedLinesAsTheSimulatorDoes() throws Exception {
        List<JSONObject> cases = Fixtures.objects(Fixtures.json("contract/glass/lines.json"), "cases");
        assertTrue(cases.size() > 40);
        for (JSONObject c : cases) {
            assertEquals(c.getString("line"), c.getString("reply"), protocol.handle(c.getString("line")));
        }
        assertTrue(host.performed.isEmpty());
    }
}
