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
        assertEquals("a&amp;b&lt;c&gt;d&quot;e'f&#10;g&#9;h&#0;", UiXmlWriter.escape("a&b<c>d\"e'f\ng\th\u0000"));
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
}
