package dev.devicebridge.glassagent;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import android.view.KeyEvent;
import dev.devicebridge.fakes.FakeDevice;
import org.junit.Before;
import org.junit.Test;

public class TextInputTest {
    private AgentOnFakes agent;

    @Before
    public void freshDevice() {
        agent = AgentOnFakes.fresh();
    }

    private static void onlyDownsAndUps() {
        for (KeyEvent k : FakeDevice.Input.keyEvents()) {
            assertTrue(k.toString(), k.getAction() == KeyEvent.ACTION_DOWN || k.getAction() == KeyEvent.ACTION_UP);
        }
    }

    @Test
    public void textOnTheKeymapIsTypedKeyByKeyWithoutTouchingTheClipboard() throws Exception {
        FakeDevice.Clipboard.userCopies("mine");
        agent.ok("text", "\"text\":" + AgentOnFakes.quote("Hello, World! 42 {a_b}\n"));
        assertEquals("Hello, World! 42 {a_b}\n", FakeDevice.Input.focusedText());
        assertEquals(0, FakeDevice.Clipboard.writes());
        onlyDownsAndUps();
    }

    @Test
    public void accentedLettersAreComposedWithTheKeymapsDeadKeys() throws Exception {
        agent.ok("text", "\"text\":" + AgentOnFakes.quote("h\u00e9llo \u00e0 \u00f1 \u00dc\u00ee"));
        assertEquals("h\u00e9llo \u00e0 \u00f1 \u00dc\u00ee", FakeDevice.Input.focusedText());
        assertEquals(0, FakeDevice.Clipboard.writes());
        onlyDownsAndUps();
    }

    @Test
    public void textOffTheKeymapIsPastedAndTheUsersClipIsRestored() throws Exception {
        FakeDevice.Clipboard.userCopies("the user's clip");
        String text = "h\u00e9llo \u65e5\u672c \ud83d\ude00";
        agent.ok("text", "\"text\":" + AgentOnFakes.quote(text));
        assertEquals(text, FakeDevice.Input.focusedText());
        assertEquals("the user's clip", FakeDevice.Clipboard.text());
        onlyDownsAndUps();
    }

    @Test
    public void pastedTextDoesNotLingerWhenTheUserHadNoClip() throws Exception {
        agent.ok("text", "\"text\":" + AgentOnFakes.quote("\u65e5\u672c"));
        assertEquals("\u65e5\u672c", FakeDevice.Input.focusedText());
        assertEquals("", FakeDevice.Clipboard.text());
    }

    @Test
    public void aRefusedPasteStillRestoresTheUsersClip() throws Exception {
        FakeDevice.Clipboard.userCopies("the user's clip");
        FakeDevice.Input.failWith(new SecurityException("no input now"));
        String error = agent.error("text", "\"text\":" + AgentOnFakes.quote("\u65e5\u672c"));
        assertTrue(error, error.endsWith("SecurityException: no input now"));
        assertEquals("the user's clip", FakeDevice.Clipboard.text());
        assertEquals("", FakeDevice.Input.focusedText());
    }

    @Test
    public void keyboardTextAndPastedTextKeepTheirOrder() throws Exception {
        agent.ok("text", "\"text\":" + AgentOnFakes.quote("a\u65e5b\ud83d\ude00c"));
        assertEquals("a\u65e5b\ud83d\ude00c", FakeDevice.Input.focusedText());
    }
}
