package dev.devicebridge.glassagent;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import dev.devicebridge.fakes.FakeDevice;
import java.util.List;
import org.junit.Before;
import org.junit.Test;

public class ClipboardTest {
    private AgentOnFakes agent;

    @Before
    public void freshDevice() {
        agent = AgentOnFakes.fresh();
    }

    @Test
    public void setThenGetRoundTripsAnyUnicode() throws Exception {
        String text = "x \u00e9 \u65e5\u672c \ud83d\ude00";
        agent.ok("clipboard_set", "\"text\":" + AgentOnFakes.quote(text));
        assertEquals(text, FakeDevice.Clipboard.text());
        assertEquals(text, agent.ok("clipboard_get", "").getString("text"));
    }

    @Test
    public void readsWhatTheUserCopied() throws Exception {
        FakeDevice.Clipboard.userCopies("copied by hand");
        assertEquals("copied by hand", agent.ok("clipboard_get", "").getString("text"));
    }

    @Test
    public void callsTheServiceAsTheShellPackageForUserZero() throws Exception {
        agent.ok("clipboard_set", "\"text\":\"a\"");
        agent.ok("clipboard_get", "");
        List<String> calls = FakeDevice.Clipboard.calls();
        assertEquals(calls.toString(), 2, calls.size());
        assertTrue(calls.get(0), calls.get(0).startsWith("setPrimaryClip(clip, com.android.shell"));
        assertTrue(calls.get(1), calls.get(1).startsWith("getPrimaryClip(com.android.shell"));
        if (AgentOnFakes.profile().atLeast(29)) {
            // Every user id is 0; no parameter of a primitive type is left out.
            for (String call : calls) assertTrue(call, call.contains(", 0"));
        }
    }

    @Test
    public void aClipWithEmptyTextIsEmptyText() throws Exception {
        FakeDevice.Clipboard.userCopies("");
        assertEquals("", agent.ok("clipboard_get", "").getString("text"));
    }

    @Test
    public void aLockedDeviceIsAnErrorNotEmptyText() throws Exception {
        assumeTrue("the clipboard is readable while locked before Android 8", AgentOnFakes.profile().atLeast(26));
        FakeDevice.Clipboard.userCopies("secret");
        FakeDevice.Screen.setLocked(true);
        String error = agent.error("clipboard_get", "");
        assertTrue(error, error.startsWith("clipboard could not be read"));
        assertTrue(error, error.contains("locked"));
    }

    @Test
    public void noClipOnAnUnlockedDeviceIsAnEmptyClipboard() throws Exception {
        FakeDevice.Clipboard.userCopies(null);
        assertEquals("", agent.ok("clipboard_get", "").getString("text"));
    }

    @Test
    public void noClipWhileLockedIsStillTheLockError() throws Exception {
        assumeTrue("the clipboard is readable while locked before Android 8", AgentOnFakes.profile().atLeast(26));
        FakeDevice.Clipboard.userCopies(null);
        FakeDevice.Screen.setLocked(true);
        String error = agent.error("clipboard_get", "");
        assertTrue(error, error.contains("locked"));
    }
}
