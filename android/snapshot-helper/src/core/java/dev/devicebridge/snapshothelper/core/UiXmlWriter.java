package dev.devicebridge.snapshothelper.core;

import java.util.List;

/**
 * Serializes window roots into one uiautomator XML document, the way {@code uiautomator dump}
 * writes it: one line, the standalone declaration, {@code <hierarchy rotation="N">}, attributes in
 * uiautomator's order, leaves as {@code <node ... />}. Window roots carry the helper's window
 * metadata right after {@code index}; {@code drawing-order} is written only when the platform has
 * it (API 24+), {@code hint} only when the node has one.
 *
 * Limits: pre-order; a node at depth {@code maxDepth} (roots are depth 0) keeps no children; once
 * {@code maxNodes} nodes are written every later node is dropped. Anything dropped sets
 * {@code truncated}. A child the platform no longer returns (null) is skipped silently, but keeps
 * its index slot.
 */
public final class UiXmlWriter {
    public static final String DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>";

    /** What a capture produced. */
    public static final class Result {
        public final String xml;
        public final int nodeCount;
        public final int windowCount;
        public final boolean truncated;

        Result(String xml, int nodeCount, int windowCount, boolean truncated) {
            this.xml = xml;
            this.nodeCount = nodeCount;
            this.windowCount = windowCount;
            this.truncated = truncated;
        }
    }

    private final int maxDepth;
    private final int maxNodes;
    private final StringBuilder out = new StringBuilder(64 * 1024);
    private int nodeCount;
    private int windowCount;
    private boolean truncated;

    private UiXmlWriter(int maxDepth, int maxNodes) {
        this.maxDepth = maxDepth;
        this.maxNodes = maxNodes;
    }

    public static Result write(List<WindowRoot> roots, int rotation, int maxDepth, int maxNodes) {
        UiXmlWriter w = new UiXmlWriter(maxDepth, maxNodes);
        w.out.append(DECLARATION).append("<hierarchy rotation=\"").append(rotation).append("\">");
        for (int i = 0; i < roots.size(); i++) {
            WindowRoot root = roots.get(i);
            if (root == null || root.root == null) continue;
            if (w.node(root.root, root.window, i, 0)) w.windowCount++;
        }
        w.out.append("</hierarchy>");
        return new Result(w.out.toString(), w.nodeCount, w.windowCount, w.truncated);
    }

    /** Writes the node and its subtree; false when the node itself was dropped. */
    private boolean node(NodeView node, WindowInfo window, int index, int depth) {
        if (nodeCount >= maxNodes || depth > maxDepth) {
            truncated = true;
            return false;
        }
        nodeCount++;
        out.append("<node index=\"").append(index).append('"');
        if (window != null) {
            out.append(" window-index=\"").append(window.index)
                    .append("\" window-type=\"").append(window.type)
                    .append("\" window-layer=\"").append(window.layer)
                    .append("\" window-active=\"").append(window.active)
                    .append("\" window-focused=\"").append(window.focused)
                    .append("\" window-bounds=\"").append(window.bounds.format()).append('"');
        }
        attr("text", node.text());
        attr("resource-id", node.resourceId());
        attr("class", node.className());
        attr("package", node.packageName());
        attr("content-desc", node.contentDesc());
        flag("checkable", node.checkable());
        flag("checked", node.checked());
        flag("clickable", node.clickable());
        flag("enabled", node.enabled());
        flag("focusable", node.focusable());
        flag("focused", node.focused());
        flag("scrollable", node.scrollable());
        flag("long-clickable", node.longClickable());
        flag("password", node.password());
        flag("selected", node.selected());
        flag("visible-to-user", node.visibleToUser());
        attr("bounds", node.bounds().format());
        int drawingOrder = node.drawingOrder();
        if (drawingOrder != NodeView.NO_DRAWING_ORDER) attr("drawing-order", Integer.toString(drawingOrder));
        String hint = node.hint();
        if (hint != null) attr("hint", hint);
        int children = node.childCount();
        int mark = out.length();
        out.append('>');
        boolean wroteChild = false;
        for (int i = 0; i < children; i++) {
            NodeView child = node.child(i);
            if (child == null) continue;
            if (node(child, null, i, depth + 1)) wroteChild = true;
        }
        if (!wroteChild) {
            out.setLength(mark);
            out.append(" />");
        } else {
            out.append("</node>");
        }
        return true;
    }

    private void attr(String name, String value) {
        out.append(' ').append(name).append("=\"");
        escape(value == null ? "" : value, out);
        out.append('"');
    }

    private void flag(String name, boolean value) {
        out.append(' ').append(name).append(value ? "=\"true\"" : "=\"false\"");
    }

    /**
     * Attribute escaping: markup characters as entities; tab, LF and CR as numeric references (an
     * XML parser would turn them raw into spaces); what XML 1.0 cannot carry at all, not even as a
     * reference (the other C0 controls, unpaired surrogates, U+FFFE, U+FFFF) is dropped, so the
     * document is always well-formed XML 1.0. uiautomator writes "." for these and Appium "?"; a
     * dropped control character shows nothing on screen either. The bridge's parser drops the same
     * characters from the references older helpers wrote (src/snapshot/xml-values.ts).
     */
    public static void escape(String value, StringBuilder out) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '&': out.append("&amp;"); break;
                case '<': out.append("&lt;"); break;
                case '>': out.append("&gt;"); break;
                case '"': out.append("&quot;"); break;
                case '\t':
                case '\n':
                case '\r':
                    out.append("&#").append((int) c).append(';');
                    break;
                default:
                    if (c < 32 || c == '\ufffe' || c == '\uffff') break;
                    if (Character.isSurrogate(c)) {
                        if (Character.isHighSurrogate(c) && i + 1 < value.length()
                                && Character.isLowSurrogate(value.charAt(i + 1))) {
                            out.append(c).append(value.charAt(++i));
                        }
                        break;
                    }
                    out.append(c);
            }
        }
    }

    public static String escape(String value) {
        StringBuilder sb = new StringBuilder(value.length() + 8);
        escape(value, sb);
        return sb.toString();
    }
}
