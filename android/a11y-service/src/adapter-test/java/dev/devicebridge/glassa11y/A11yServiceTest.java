package dev.devicebridge.glassa11y;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import android.view.accessibility.AccessibilityWindowInfo;
import dev.devicebridge.fakes.FakeAccessibility;
import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.FakeSockets;
import dev.devicebridge.glass.common.JsonLineProtocol;
import java.io.IOException;
import org.json.JSONObject;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** GlassAccessibilityService as the system runs it, served over localabstract:glass-a11y to the shell (uid 2000). */
public class A11yServiceTest {
    private static final int SHELL = 2000;
    private GlassAccessibilityService service;
    private FakeAccessibility.Node field;
    private FakeAccessibility.Node button;
    private FakeAccessibility.Node collapsed;
    private FakeSockets.Client client;
    private int id;

    @Before
    public void connectService() throws Exception {
        FakeDevice.reset();
        FakeAccessibility.Node root = new FakeAccessibility.Node("android.widget.FrameLayout", null, 0, 0, 1080, 2400);
        field = new FakeAccessibility.Node("android.widget.EditText", "", 40, 200, 1040, 320);
        field.editable = true;
        button = new FakeAccessibility.Node("android.widget.Button", "Go", 40, 400, 1040, 520);
        button.clickable = true;
        collapsed = new FakeAccessibility.Node("android.widget.Button", "Hidden", 40, 600, 40, 600);
        collapsed.clickable = true;
        root.add(field).add(button).add(collapsed);
        FakeAccessibility.setWindows(new FakeAccessibility.Window(AccessibilityWindowInfo.TYPE_APPLICATION, 1, true, true,
                new int[] {0, 0, 1080, 2400}, root));
        service = new GlassAccessibilityService();
        service.onServiceConnected();
        client = connect();
    }

    @After
    public void destroyService() {
        if (client != null) client.close();
        service.onDestroy();
    }

    /** Connects as the shell once the service listens; reads the banner. */
    private static FakeSockets.Client connect() throws Exception {
        long deadline = System.currentTimeMillis() + 5000;
        while (true) {
            try {
                FakeSockets.Client c = FakeDevice.Sockets.connect(GlassAccessibilityService.SOCKET_NAME, SHELL);
                assertEquals(JsonLineProtocol.HELLO, c.readLine(5000));
                return c;
            } catch (IOException notYet) {
                if (System.currentTimeMillis() > deadline) throw notYet;
                Thread.sleep(10);
            }
        }
    }

    private JSONObject call(String op, String fields) throws Exception {
        int n = ++id;
        client.send("{\"id\":" + n + ",\"op\":\"" + op + "\"" + (fields.isEmpty() ? "" : "," + fields) + "}");
        JSONObject reply = new JSONObject(client.readLine(5000));
        assertEquals(n, reply.getInt("id"));
        return reply;
    }

    private JSONObject ok(String op, String fields) throws Exception {
        JSONObject reply = call(op, fields);
        if (!reply.optBoolean("ok")) throw new AssertionError(op + " failed on profile " + FakeDevice.profile() + ": " + reply);
        return reply;
    }

    private String error(String op, String fields) throws Exception {
        JSONObject reply = call(op, fields);
        if (reply.optBoolean("ok")) throw new AssertionError(op + " succeeded on profile " + FakeDevice.profile() + ": " + reply);
        return reply.getString("error");
    }

    @Test
    public void servesTheActiveWindowsTree() throws Exception {
        JSONObject reply = ok("tree", "\"package\":\"com.example.app\"");
        assertEquals("com.example.app", reply.getString("package"));
        JSONObject tree = reply.getJSONObject("tree");
        assertEquals(0, tree.getInt("ref"));
        assertEquals("android.widget.FrameLayout", tree.getString("class"));
        JSONObject go = tree.getJSONArray("children").getJSONObject(1);
        assertEquals("Go", go.getString("text"));
        assertTrue(go.getBoolean("clickable"));
        assertEquals(1000, go.getJSONObject("bounds").getInt("w"));
    }

    @Test
    public void setTextSetsTheFieldThroughActionSetText() throws Exception {
        ok("tree", "\"package\":\"com.example.app\"");
        ok("action", "\"ref\":1,\"action\":\"set_text\",\"text\":\"h\u00e9llo \ud83d\ude00\"");
        assertEquals("h\u00e9llo \ud83d\ude00", field.text);
        assertTrue(FakeAccessibility.actions().toString(), FakeAccessibility.actions().get(0).startsWith("ACTION_SET_TEXT("));
    }

    @Test
    public void aScreenOffOrKeyguardIsAClearTreeErrorAndPingStillAnswers() throws Exception {
        FakeAccessibility.setScreenOffOrLocked(true);
        String error = error("tree", "\"package\":\"com.example.app\"");
        assertTrue(error, error.contains("getRootInActiveWindow"));
        assertTrue(error, error.contains("API " + FakeDevice.profile().sdk));
        assertTrue(error, error.contains("screen"));
        ok("ping", "");
    }

    @Test
    public void clickRefusesANodeWithEmptyBounds() throws Exception {
        ok("tree", "\"package\":\"com.example.app\"");
        String error = error("action", "\"ref\":3,\"action\":\"click\"");
        assertTrue(error, error.contains("empty bounds"));
        assertTrue(FakeAccessibility.actions().toString(), FakeAccessibility.actions().isEmpty());
        // A node with bounds is still clicked through ACTION_CLICK (the host taps coordinates itself).
        ok("action", "\"ref\":2,\"action\":\"click\"");
        assertEquals("[ACTION_CLICK on android.widget.Button]", FakeAccessibility.actions().toString());
    }

    @Test
    public void onDestroyClosesTheSocketAndTheOpenConnection() throws Exception {
        ok("ping", "");
        service.onDestroy();
        assertNull("the open connection is still served after onDestroy", client.readLine(5000));
        try {
            FakeDevice.Sockets.connect(GlassAccessibilityService.SOCKET_NAME, SHELL);
            fail("localabstract:glass-a11y still listens after onDestroy");
        } catch (IOException expected) {
            assertFalse(expected.getMessage(), expected.getMessage().isEmpty());
        }
    }

    @Test
    public void anAppUidIsNotServed() throws Exception {
        client.close();
        FakeSockets.Client app = FakeDevice.Sockets.connect(GlassAccessibilityService.SOCKET_NAME, 10123);
        assertNull(app.readLine(5000));
        client = connect();
        ok("ping", "");
    }
}
