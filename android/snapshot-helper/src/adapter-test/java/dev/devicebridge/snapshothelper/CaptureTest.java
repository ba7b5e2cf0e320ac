package dev.devicebridge.snapshothelper;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.devicebridge.fakes.FakeAccessibility;
import java.util.List;
import org.junit.Before;
import org.junit.Test;

/** One-shot snapshots through the real AndroidDevice on the fake UiAutomation of each profile. */
public class CaptureTest {
    private HelperOnFakes device;

    @Before
    public void freshDevice() {
        device = HelperOnFakes.fresh();
    }

    @Test
    public void theFirstSnapshotIncludesTheKeyboard() throws Exception {
        // As on a device, getWindows() is still empty right after the interactive-windows flag is set.
        HelperOnFakes.Run run = HelperOnFakes.oneShot().ok();
        assertEquals(run.xml, "interactive-windows", run.get("captureMode"));
        assertTrue(run.xml, run.xml.contains("text=\"KeyboardKey q\""));
        assertTrue(run.xml, run.xml.contains("text=\"Go\""));
        assertEquals("2", run.get("windowCount"));
    }

    @Test
    public void windowsThatNeverAppearGiveAnIncompleteActiveWindowCapture() throws Exception {
        FakeAccessibility.setEmptyWindowCallsAfterFlag(Integer.MAX_VALUE);
        HelperOnFakes.Run run = HelperOnFakes.oneShot().ok();
        assertEquals("active-window", run.get("captureMode"));
        assertTrue(run.xml, run.xml.contains("text=\"Go\""));
        // Incomplete: the acquisition kept retrying for its bounded stabilisation wait instead of
        // returning the active-window fallback at once as if it were complete.
        long elapsed = Long.parseLong(run.get("elapsedMs"));
        assertTrue("elapsedMs " + elapsed, elapsed >= 400);
        assertTrue("elapsedMs " + elapsed, elapsed < 5000);
    }

    @Test
    public void theApiLevelChoosesHowUiAutomationIsObtained() throws Exception {
        HelperOnFakes.oneShot().ok();
        List<String> calls = FakeAccessibility.calls();
        if (HelperOnFakes.profile().atLeast(24)) {
            assertTrue(calls.toString(), calls.contains("getUiAutomation(1)"));
        } else {
            assertTrue(calls.toString(), calls.contains("getUiAutomation()"));
        }
        assertFalse(calls.toString(), calls.contains("getUiAutomation(0)"));
    }

    @Test
    public void drawingOrderFrom24AndHintFrom26() throws Exception {
        HelperOnFakes.Run run = HelperOnFakes.oneShot().ok();
        assertEquals(run.xml, HelperOnFakes.profile().atLeast(24), run.xml.contains("drawing-order=\"2\""));
        assertEquals(run.xml, HelperOnFakes.profile().atLeast(26), run.xml.contains("hint=\"Search here\""));
    }

    @Test
    public void theInteractiveWindowsFlagIsSetWithNotImportantViewsAndViewIds() throws Exception {
        HelperOnFakes.oneShot().ok();
        boolean found = false;
        for (String call : FakeAccessibility.calls()) {
            if (!call.startsWith("setServiceInfo(flags=0x")) continue;
            int flags = Integer.parseInt(call.substring("setServiceInfo(flags=0x".length(), call.length() - 1), 16);
            found |= (flags & 0x40) != 0 && (flags & 0x2) != 0 && (flags & 0x10) != 0;
        }
        assertTrue(FakeAccessibility.calls().toString(), found);
    }

    @Test
    public void anotherUiAutomationClientIsAnErrorNamingTheApiAndLevel() throws Exception {
        // uiautomator dump (or Appium) holds the one UiAutomation connection.
        final Object other = new Object();
        FakeAccessibility.connectUiAutomation(other);
        HelperOnFakes.Run run = HelperOnFakes.oneShot();
        assertEquals("false", run.get("ok"));
        String message = run.get("message");
        assertTrue(message, message.contains("Instrumentation.getUiAutomation"));
        assertTrue(message, message.contains("on API " + HelperOnFakes.profile().sdk));
        assertTrue(message, message.contains("already registered"));
        assertTrue(message, message.contains("uiautomator dump"));
        assertEquals("java.lang.IllegalStateException", run.get("errorType"));
    }

    @Test
    public void viewportIsTheActiveApplicationWindow() throws Exception {
        HelperOnFakes.Run run = HelperOnFakes.oneShot("mode", "viewport").ok();
        assertEquals("0", run.get("x"));
        assertEquals("1080", run.get("width"));
        assertEquals("2400", run.get("height"));
    }
}
