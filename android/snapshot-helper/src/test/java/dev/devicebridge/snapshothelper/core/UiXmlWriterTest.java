package dev.devicebridge.snapshothelper.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import java.util.Collections;
import org.junit.Test;

public class UiXmlWriterTest {
    private static WindowRoot root(FakeNode node) {
        return new WindowRoot(node, null);
    }

    @Test
    public void writesUiautomatorAttributeOrderAndSelfClosingLeaves() {
        FakeNode leaf = new FakeNode("android.widget.TextView", new Rect(1, 2, 30, 40));
        leaf.text = "Hi";
        leaf.resourceId = "com.example:id/title";
        leaf.contentDesc = "greeting";
        leaf.clickable = true;
        FakeNode top = new FakeNode("android.widget.FrameLayout", new Rect(0, 0, 1080, 2400)).add(leaf);
        UiXmlWriter.Result r = UiXmlWriter.write(Collections.singletonList(root(top)), 1, 128, 5000);
        assertEquals(UiXmlWriter.DECLARATION + "<hierarchy rotation=\"1\">"
                + "<node index=\"0\" text=\"\" resource-id=\"\" class=\"android.widget.FrameLayout\" package=\"com.example\""
                + " content-desc=\"\" checkable=\"false\" checked=\"false\" clickable=\"false\" enabled=\"true\""
                + " focusable=\"false\" focused=\"false\" scrollable=\"false\" long-clickable=\"false\" password=\"false\""
                + " selected=\"false\" visible-to-user=\"true\" bounds=\"[0,0][1080,2400]\">"
                + "<node index=\"0\" text=\"Hi\" resource-id=\"com.example:id/title\" class=\"android.widget.TextView\""
                + " package=\"com.example\" content-desc=\"greeting\" checkable=\"false\" checked=\"false\" clickable=\"true\""
                + " enabled=\"true\" focusable=\"false\" focused=\"false\" scrollable=\"false\" long-clickable=\"false\""
                + " password=\"false\" selected=\"false\" visible-to-user=\"true\" bounds=\"[1,2][30,40]\" />"
                + "</node></hierarchy>", r.xml);
        assertEquals(2, r.nodeCount);
        assertEquals(1, r.windowCount);
        assertFalse(r.truncated);
    }

    @Test
    public void windowMetadataOnlyOnWindowRootsRightAfterIndex() {
        FakeNode top = new FakeNode().add(new FakeNode());
        WindowInfo w = new WindowInfo(3, 2, 21, false, true, new Rect(0, 1500, 1080, 2400));
        String xml = UiXmlWriter.write(Collections.singletonList(new WindowRoot(top, w)), 0, 128, 5000).xml;
        assertTrue(xml.contains("<node index=\"0\" window-index=\"3\" window-type=\"2\" window-layer=\"21\""
                + " window-active=\"false\" window-focused=\"true\" window-bounds=\"[0,1500][1080,2400]\" text=\"\""));
        assertEquals(1, xml.split("window-index", -1).length - 1);
    }

    @Test
    public void drawingOrderOnlyWhenThePlatformHasItAndHintOnlyWhenPresent() {
        FakeNode api23 = new FakeNode();
        FakeNode api24 = new FakeNode();
        api24.drawingOrder = 7;
        api24.hint = "Search";
        String xml23 = UiXmlWriter.write(Collections.singletonList(root(api23)), 0, 128, 5000).xml;
        String xml24 = UiXmlWriter.write(Collections.singletonList(root(api24)), 0, 128, 5000).xml;
        assertFalse(xml23.contains("drawing-order"));
        assertFalse(xml23.contains("hint="));
        assertTrue(xml24.contains(" bounds=\"[0,0][100,100]\" drawing-order=\"7\" hint=\"Search\" />"));
    }

    @Test
    public void escapesMarkupAndControlCharacters() {
        assertEquals("a&amp;b&lt;c&gt;d&quot;e'f&#10;g&#9;h", UiXmlWriter.escape("a&b<c>d\"e'f\ng\th\u0000"));
        assertEquals("\u00e9\u4e2d\ud83d\ude00", UiXmlWriter.escape("\u00e9\u4e2d\ud83d\ude00"));
        FakeNode n = new FakeNode();
        n.text = "<b>\"x\"</b>";
        assertTrue(UiXmlWriter.write(Collections.singletonList(root(n)), 0, 1, 1).xml
                .contains(" text=\"&lt;b&gt;&quot;x&quot;&lt;/b&gt;\""));
    }

    @Test
    public void maxDepthKeepsNodesAtTheLimitAndDropsTheirChildren() {
        FakeNode top = new FakeNode();
        top.chain(5);
        UiXmlWriter.Result r = UiXmlWriter.write(Collections.singletonList(root(top)), 0, 2, 5000);
        assertEquals(3, r.nodeCount);
        assertTrue(r.truncated);
        // The node at depth 2 lost its only child: it is written as a leaf.
        assertTrue(r.xml.endsWith("bounds=\"[0,0][100,100]\" /></node></node></hierarchy>"));
        UiXmlWriter.Result full = UiXmlWriter.write(Collections.singletonList(root(top)), 0, 5, 5000);
        assertEquals(6, full.nodeCount);
        assertFalse(full.truncated);
    }

    @Test
    public void maxNodesCutsInPreorderAcrossWindows() {
        FakeNode a = new FakeNode().add(new FakeNode()).add(new FakeNode());
        FakeNode b = new FakeNode().add(new FakeNode());
        UiXmlWriter.Result r = UiXmlWriter.write(Arrays.asList(root(a), root(b)), 0, 128, 4);
        assertEquals(4, r.nodeCount);
        assertEquals(2, r.windowCount);
        assertTrue(r.truncated);
        UiXmlWriter.Result three = UiXmlWriter.write(Arrays.asList(root(a), root(b)), 0, 128, 3);
        assertEquals(1, three.windowCount);
        assertEquals(3, three.nodeCount);
    }

    @Test
    public void missingChildKeepsItsIndexSlot() {
        FakeNode top = new FakeNode();
        top.children.add(null);
        top.add(new FakeNode());
        UiXmlWriter.Result r = UiXmlWriter.write(Collections.singletonList(root(top)), 0, 128, 5000);
        assertEquals(2, r.nodeCount);
        assertFalse(r.truncated);
        assertTrue(r.xml.contains("<node index=\"1\""));
        assertFalse(r.xml.contains("<node index=\"0\" text=\"\" resource-id=\"\" class=\"android.widget.FrameLayout\" package=\"com.example\" content-desc=\"\" checkable=\"false\" checked=\"false\" clickable=\"false\" enabled=\"true\" focusable=\"false\" focused=\"false\" scrollable=\"false\" long-clickable=\"false\" password=\"false\" selected=\"false\" visible-to-user=\"true\" bounds=\"[0,0][100,100]\" />"));
    }

    @Test
    public void noRootsGiveAnEmptyHierarchy() {
        UiXmlWriter.Result r = UiXmlWriter.write(Collections.<WindowRoot>emptyList(), 0, 128, 5000);
        assertEquals(UiXmlWriter.DECLARATION + "<hierarchy rotation=\"0\"></hierarchy>", r.xml);
        assertEquals(0, r.nodeCount);
        assertEquals(0, r.windowCount);
    }

    /** What XML 1.0 cannot carry, even as a reference, is dropped; tab, LF and CR stay as references. */
    @Test
    public void charactersXml10CannotCarryAreDropped() {
        assertEquals("ab&#9;c&#10;d&#13;e", UiXmlWriter.escape("a\u0000\u0001b\tc\nd\re\u000b\u000c\u001f"));
        // Unpaired surrogates and U+FFFE/U+FFFF go too; DEL, C1 controls and pairs stay.
        assertEquals("x\u007f\u0085\ud83d\ude00y", UiXmlWriter.escape("x\u007f\u0085\ud83d\ude00\udc00y\ud800\ufffe\uffff"));
    }

    /** Any string in an attribute gives a document the JDK's XML 1.0 parser reads back (minus what XML cannot carry). */
    @Test
    public void anyAttributeTextMakesWellFormedXml10() throws Exception {
        javax.xml.parsers.DocumentBuilderFactory factory = javax.xml.parsers.DocumentBuilderFactory.newInstance();
        java.util.Random random = new java.util.Random(42);
        for (int run = 0; run < 500; run++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(12);
            for (int i = 0; i < length; i++) {
                int kind = random.nextInt(4);
                if (kind == 0) text.append((char) random.nextInt(0x30));
                else if (kind == 1) text.append((char) (0xd800 + random.nextInt(0x800)));
                else if (kind == 2) text.append((char) (0xfff0 + random.nextInt(16)));
                else text.append((char) random.nextInt(0x10000));
            }
            FakeNode node = new FakeNode();
            node.text = text.toString();
            String xml = UiXmlWriter.write(Collections.singletonList(root(node)), 0, 128, 5000).xml;
            org.w3c.dom.Document doc = factory.newDocumentBuilder()
                    .parse(new java.io.ByteArrayInputStream(xml.getBytes("UTF-8")));
            String read = ((org.w3c.dom.Element) doc.getElementsByTagName("node").item(0)).getAttribute("text");
            assertEquals(xml10(node.text), read);
        }
    }

    /** The characters XML 1.0 can carry, in order. */
    private static String xml10(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                out.append(c).append(s.charAt(++i));
            } else if (c == 9 || c == 10 || c == 13 || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd)) {
                out.append(c);
            }
        }
        return out.toString();
    }
}
