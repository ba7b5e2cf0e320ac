package dev.devicebridge.glasscontract;

import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.glass.common.LineServer;
import dev.devicebridge.glassa11y.core.A11yHost;
import dev.devicebridge.glassa11y.core.A11yNode;
import dev.devicebridge.glassa11y.core.A11yProtocol;
import dev.devicebridge.glassagent.core.Agent;
import dev.devicebridge.glassagent.core.AgentProtocol;
import dev.devicebridge.glassagent.core.Chord;
import dev.devicebridge.glassagent.core.PointerSample;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;

/**
 * Runs the glass agent's and the a11y service's protocol cores over the scripted request sequences
 * in test/fixtures/contract/glass/requests.json and writes, for each, the exact bytes the client
 * sends ({@code <name>.requests}) and the exact bytes the device side answers on the socket
 * ({@code <name>.replies}: the hello banner, then one line per request).
 *
 * usage: GenerateGlassContract CONTRACT_DIR OUT_DIR
 */
public final class GenerateGlassContract {
    /** A device whose clipboard holds what was set, and whose input injection always succeeds. */
    static final class ScriptedAgent implements Agent {
        String clipboard;

        ScriptedAgent(String clipboard) {
            this.clipboard = clipboard;
        }

        @Override public String clipboardGet() { return clipboard; }
        @Override public void clipboardSet(String text) { clipboard = text; }
        @Override public void pointer(List<PointerSample> gesture, String button) {}
        @Override public long uptimeMillis() { return 1000; }
        @Override public void touch(int action, long downTime, long eventTime, double x, double y) {}
        @Override public void key(Chord chord) {}
        @Override public void text(String text) {}
    }

    /** A fixture node tree from JSON {class, text?, desc?, bounds:[x,y,w,h], editable?, …, children?}. */
    static final class JsonNode implements A11yNode {
        final JSONObject o;

        JsonNode(JSONObject o) {
            this.o = o;
        }

        @Override public String className() { return o.optString("class"); }
        @Override public String text() { return o.has("text") ? o.optString("text") : null; }
        @Override public String contentDesc() { return o.has("desc") ? o.optString("desc") : null; }
        @Override public boolean editable() { return o.optBoolean("editable"); }
        @Override public boolean clickable() { return o.optBoolean("clickable"); }
        @Override public boolean enabled() { return o.optBoolean("enabled", true); }
        @Override public boolean scrollable() { return o.optBoolean("scrollable"); }
        @Override public int childCount() { return o.has("children") ? o.optJSONArray("children").length() : 0; }
        @Override public A11yNode child(int i) { return new JsonNode(o.optJSONArray("children").optJSONObject(i)); }

        @Override
        public int[] bounds() {
            JSONArray b = o.optJSONArray("bounds");
            return new int[] {b.optInt(0), b.optInt(1), b.optInt(2), b.optInt(3)};
        }
    }

    /** The active window's package follows a script: one entry per activeWindow() call, the last repeating. */
    static final class ScriptedHost implements A11yHost {
        final A11yNode root;
        final JSONArray packages;
        int calls;

        ScriptedHost(A11yNode root, JSONArray packages) {
            this.root = root;
            this.packages = packages;
        }

        @Override
        public Window activeWindow() {
            int i = Math.min(calls++, packages.length() - 1);
            return new Window(packages.isNull(i) ? null : packages.optString(i), root);
        }

        @Override
        public boolean perform(A11yNode node, String action, String text) {
            return node.enabled();
        }
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        File out = new File(args[1]);
        out.mkdirs();
        JSONObject spec = new JSONObject(new String(Files.readAllBytes(new File(dir, "requests.json").toPath()), StandardCharsets.UTF_8));

        JSONObject agent = spec.getJSONObject("agent");
        run(out, "agent", agent.getJSONArray("lines"), new AgentProtocol(new ScriptedAgent(agent.getString("clipboard"))));

        JSONObject a11y = spec.getJSONObject("a11y");
        run(out, "a11y", a11y.getJSONArray("lines"), new A11yProtocol(
                new ScriptedHost(new JsonNode(a11y.getJSONObject("tree")), a11y.getJSONArray("activePackages"))));
    }

    static void run(File out, String name, JSONArray lines, JsonLineProtocol protocol) throws Exception {
        StringBuilder requests = new StringBuilder();
        for (int i = 0; i < lines.length(); i++) requests.append(lines.getString(i)).append('\n');
        byte[] in = requests.toString().getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream replies = new ByteArrayOutputStream();
        LineServer.serve(new ByteArrayInputStream(in), replies, JsonLineProtocol.HELLO, protocol);
        write(new File(out, name + ".requests"), in);
        write(new File(out, name + ".replies"), replies.toByteArray());
    }

    static void write(File file, byte[] bytes) throws Exception {
        OutputStream o = new FileOutputStream(file);
        try {
            o.write(bytes);
        } finally {
            o.close();
        }
    }
}
