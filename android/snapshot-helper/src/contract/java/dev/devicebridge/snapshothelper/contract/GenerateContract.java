package dev.devicebridge.snapshothelper.contract;

import dev.devicebridge.snapshothelper.core.Clock;
import dev.devicebridge.snapshothelper.core.FakeNode;
import dev.devicebridge.snapshothelper.core.Fields;
import dev.devicebridge.snapshothelper.core.HelperCore;
import dev.devicebridge.snapshothelper.core.HelperOptions;
import dev.devicebridge.snapshothelper.core.Injector;
import dev.devicebridge.snapshothelper.core.MotionSchedule;
import dev.devicebridge.snapshothelper.core.Protocol;
import dev.devicebridge.snapshothelper.core.Rect;
import dev.devicebridge.snapshothelper.core.SessionResponse;
import dev.devicebridge.snapshothelper.core.StatusSink;
import dev.devicebridge.snapshothelper.core.UiSource;
import dev.devicebridge.snapshothelper.core.UiXmlWriter;
import dev.devicebridge.snapshothelper.core.WindowInfo;
import dev.devicebridge.snapshothelper.core.WindowRoot;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.json.JSONArray;
import org.json.JSONObject;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Writes the byte streams the snapshot helper produces on a device for the requests in
 * {@code requests.json}, over the fixture trees it names: {@code <case>.am.txt} (what
 * {@code am instrument -w} prints: status and result bundles with keys in String order, as
 * com.android.commands.am.Instrument does) and, for session cases, {@code <case>.<n>.response}
 * (the bytes of each session response). The clock is frozen except while a gesture is injected,
 * so elapsedMs is 0 for captures and durationMs for gestures, on every run.
 *
 * usage: GenerateContract CONTRACT_DIR OUT_DIR
 */
public final class GenerateContract {
    private static final Pattern BOUNDS = Pattern.compile("^\\[(-?\\d+),(-?\\d+)\\]\\[(-?\\d+),(-?\\d+)\\]$");

    /** The device of a contract case: a fixture tree, always idle, frozen clock, recording injector. */
    static final class ContractDevice implements UiSource, Injector, Clock {
        final List<WindowRoot> roots;
        final int rotation;
        long now;

        ContractDevice(List<WindowRoot> roots, int rotation) {
            this.roots = roots;
            this.rotation = rotation;
        }

        @Override public void waitForIdle(long quietMs, long timeoutMs) {}
        @Override public Acquisition acquire() {
            return new Acquisition(roots, Protocol.CAPTURE_INTERACTIVE_WINDOWS, !roots.isEmpty());
        }
        @Override public int rotation() { return rotation; }
        @Override public void inject(MotionSchedule.Step step, long downTime, long eventTime) {}
        @Override public long uptimeMillis() { return now; }
        @Override public void sleep(long ms) { now += ms; }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: GenerateContract CONTRACT_DIR OUT_DIR");
            System.exit(2);
        }
        File dir = new File(args[0]);
        File out = new File(args[1]);
        out.mkdirs();
        JSONObject requests = new JSONObject(new String(Files.readAllBytes(new File(dir, "requests.json").toPath()), StandardCharsets.UTF_8));
        JSONArray cases = requests.getJSONArray("cases");
        for (int i = 0; i < cases.length(); i++) {
            JSONObject c = cases.getJSONObject(i);
            String name = c.getString("name");
            byte[] treeBytes = Files.readAllBytes(new File(dir, c.getString("tree")).toPath());
            ContractDevice device = parseTree(treeBytes);
            // The trees are canonical: the helper's own serialization of a tree is the file itself.
            String canonical = UiXmlWriter.write(device.roots, device.rotation, Integer.MAX_VALUE, Integer.MAX_VALUE).xml;
            if (!canonical.equals(new String(treeBytes, StandardCharsets.UTF_8))) {
                System.err.println(c.getString("tree") + " is not in the helper's canonical form; it serializes as:\n" + canonical);
                System.exit(1);
            }
            HelperCore core = new HelperCore(device, device, device);
            Map<String, String> extras = new LinkedHashMap<String, String>();
            JSONObject e = c.optJSONObject("extras");
            if (e != null) {
                for (Iterator<String> keys = e.keys(); keys.hasNext(); ) {
                    String key = keys.next();
                    extras.put(key, e.getString(key));
                }
            }
            final ByteArrayOutputStream am = new ByteArrayOutputStream();
            HelperCore.Outcome outcome = core.runOneShot(extras, new StatusSink() {
                @Override
                public void status(int code, Fields fields) {
                    writeStatus(am, code, fields);
                }
            });
            if (outcome.sessionPort > 0) {
                writeStatus(am, Protocol.STATUS_CODE_SESSION_READY, HelperCore.sessionReady(outcome.options, outcome.sessionPort));
                JSONArray lines = c.getJSONArray("session");
                boolean quit = false;
                for (int n = 0; n < lines.length() && !quit; n++) {
                    String line = lines.isNull(n) ? null : lines.getString(n);
                    SessionResponse response = core.session(line, outcome.options);
                    write(new File(out, name + "." + n + ".response"), response.toBytes());
                    quit = response.quit;
                }
                if (quit) writeResult(am, Protocol.RESULT_CODE_OK, HelperCore.sessionEnded(outcome.options));
            } else {
                writeResult(am, outcome.code, outcome.result);
            }
            write(new File(out, name + ".am.txt"), am.toByteArray());
        }
    }

    /** am's TextStatusReporter: one line per key in String order, then the code. */
    static void writeStatus(ByteArrayOutputStream out, int code, Fields fields) {
        StringBuilder sb = new StringBuilder();
        for (String key : fields.sortedKeys()) sb.append("INSTRUMENTATION_STATUS: ").append(key).append('=').append(fields.get(key)).append('\n');
        sb.append("INSTRUMENTATION_STATUS_CODE: ").append(code).append('\n');
        byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
        out.write(b, 0, b.length);
    }

    static void writeResult(ByteArrayOutputStream out, int code, Fields fields) {
        StringBuilder sb = new StringBuilder();
        for (String key : fields.sortedKeys()) sb.append("INSTRUMENTATION_RESULT: ").append(key).append('=').append(fields.get(key)).append('\n');
        sb.append("INSTRUMENTATION_CODE: ").append(code).append('\n');
        byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
        out.write(b, 0, b.length);
    }

    static void write(File file, byte[] bytes) throws IOException {
        OutputStream o = new FileOutputStream(file);
        try {
            o.write(bytes);
        } finally {
            o.close();
        }
    }

    /** A uiautomator document (window metadata on roots) as NodeViews. */
    static ContractDevice parseTree(byte[] xml) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setExpandEntityReferences(false);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document doc = f.newDocumentBuilder().parse(new ByteArrayInputStream(xml));
        Element hierarchy = doc.getDocumentElement();
        int rotation = Integer.parseInt(hierarchy.getAttribute("rotation"));
        List<WindowRoot> roots = new ArrayList<WindowRoot>();
        for (Element root : nodes(hierarchy)) {
            WindowInfo window = null;
            if (root.hasAttribute("window-index")) {
                window = new WindowInfo(Integer.parseInt(root.getAttribute("window-index")),
                        Integer.parseInt(root.getAttribute("window-type")),
                        Integer.parseInt(root.getAttribute("window-layer")),
                        Boolean.parseBoolean(root.getAttribute("window-active")),
                        Boolean.parseBoolean(root.getAttribute("window-focused")),
                        bounds(root.getAttribute("window-bounds")));
            }
            roots.add(new WindowRoot(node(root), window));
        }
        return new ContractDevice(roots, rotation);
    }

    private static List<Element> nodes(Element parent) {
        List<Element> out = new ArrayList<Element>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element && "node".equals(n.getNodeName())) out.add((Element) n);
        }
        return out;
    }

    private static FakeNode node(Element e) {
        FakeNode n = new FakeNode(e.getAttribute("class"), bounds(e.getAttribute("bounds")));
        n.packageName = e.getAttribute("package");
        n.text = e.getAttribute("text");
        n.resourceId = e.getAttribute("resource-id");
        n.contentDesc = e.getAttribute("content-desc");
        n.hint = e.hasAttribute("hint") ? e.getAttribute("hint") : null;
        n.checkable = flag(e, "checkable");
        n.checked = flag(e, "checked");
        n.clickable = flag(e, "clickable");
        n.enabled = flag(e, "enabled");
        n.focusable = flag(e, "focusable");
        n.focused = flag(e, "focused");
        n.scrollable = flag(e, "scrollable");
        n.longClickable = flag(e, "long-clickable");
        n.password = flag(e, "password");
        n.selected = flag(e, "selected");
        n.visibleToUser = flag(e, "visible-to-user");
        if (e.hasAttribute("drawing-order")) n.drawingOrder = Integer.parseInt(e.getAttribute("drawing-order"));
        for (Element child : nodes(e)) n.add(node(child));
        return n;
    }

    private static boolean flag(Element e, String name) {
        return "true".equals(e.getAttribute(name));
    }

    private static Rect bounds(String value) {
        Matcher m = BOUNDS.matcher(value);
        if (!m.matches()) throw new IllegalArgumentException("bad bounds: " + value);
        return new Rect(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)));
    }

}
