package dev.devicebridge.glassagent.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.json.Fixtures;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.json.JSONObject;
import org.junit.Test;

public class AgentProtocolTest {
    /** Records calls; fails when told to. */
    static final class RecordingAgent implements Agent {
        String clipboard = "";
        final List<String> calls = new ArrayList<String>();
        List<PointerSample> gesture;
        Chord chord;
        boolean fail;
        boolean failTouch;
        long clock = 100;

        @Override public String clipboardGet() {
            calls.add("clipboard_get");
            return clipboard;
        }
        @Override public void clipboardSet(String text) {
            if (fail) throw new IllegalStateException("clipboard service unavailable");
            calls.add("clipboard_set");
            clipboard = text;
        }
        @Override public void pointer(List<PointerSample> g, String button) {
            calls.add("pointer:" + button);
            gesture = g;
        }
        @Override public long uptimeMillis() {
            return ++clock;
        }
        @Override public void touch(int action, long downTime, long eventTime, double x, double y) {
            if (failTouch) throw new IllegalStateException("injection refused");
            calls.add("touch:" + action + "@" + downTime + "/" + eventTime + ":" + x + "," + y);
        }
        @Override public void key(Chord c) {
            calls.add("key");
            chord = c;
        }
        @Override public void text(String text) {
            calls.add("text:" + text);
        }
    }

    private final RecordingAgent agent = new RecordingAgent();
    private final AgentProtocol protocol = new AgentProtocol(agent);

    @Test
    public void eachOpAnswersWithItsIdAndOk() {
        assertEquals("{\"id\":1,\"ok\":true}", protocol.handle("{\"id\":1,\"op\":\"ping\"}"));
        assertEquals("{\"id\":2,\"ok\":true}", protocol.handle("{\"id\":2,\"op\":\"clipboard_set\",\"text\":\"h\u00e9 \ud83d\ude00\"}"));
        assertEquals("{\"id\":3,\"ok\":true,\"text\":\"h\u00e9 \ud83d\ude00\"}", protocol.handle("{\"op\":\"clipboard_get\",\"id\":3}"));
        assertEquals("{\"id\":4,\"ok\":true}", protocol.handle(
                "{\"id\":4,\"op\":\"pointer\",\"button\":\"left\",\"gesture\":[{\"x\":1,\"y\":2,\"t_ms\":0},{\"x\":3.5,\"y\":4,\"t_ms\":16}]}"));
        assertEquals(2, agent.gesture.size());
        assertEquals(3.5, agent.gesture.get(1).x, 0);
        assertEquals(16, agent.gesture.get(1).tMs);
        assertEquals("{\"id\":5,\"ok\":true}", protocol.handle("{\"id\":5,\"op\":\"key\",\"chord\":\"ctrl+a\"}"));
        assertEquals(29, agent.chord.keyCode);
        assertEquals(Chord.META_CTRL_ON, agent.chord.metaState);
        assertEquals("{\"id\":6,\"ok\":true}", protocol.handle("{\"id\":6,\"op\":\"text\",\"text\":\"\u4f60\u597d\ud83d\udc4b\"}"));
        assertEquals("text:\u4f60\u597d\ud83d\udc4b", agent.calls.get(agent.calls.size() - 1));
    }

    @Test
    public void malformedLinesGetIdMinusOne() {
        for (String line : new String[] {"not json", "[1,2]", "{\"op\":\"ping\"}", "{\"id\":\"7\",\"op\":\"ping\"}",
            "{\"id\":1.5,\"op\":\"ping\"}", "{\"id\":1,\"op\":\"ping\"} trailing", "{\"id\":1,",
            // Beyond 2^53 - 1 a JavaScript host cannot hold the id it would get back.
            "{\"id\":9007199254740992,\"op\":\"ping\"}", "{\"id\":-9007199254740992,\"op\":\"ping\"}"}) {
            assertEquals(line, JsonLineProtocol.MALFORMED, protocol.handle(line));
        }
        assertEquals("{\"id\":-1,\"ok\":false,\"error\":\"malformed request\"}", JsonLineProtocol.MALFORMED);
        assertEquals("{\"id\":9007199254740991,\"ok\":true}", protocol.handle("{\"id\":9007199254740991,\"op\":\"ping\"}"));
        assertTrue(agent.calls.isEmpty());
    }

    @Test
    public void unknownOpsAndHandlerErrorsKeepTheIdAndSayWhy() {
        assertEquals("{\"id\":9,\"ok\":false,\"error\":\"unknown op: dance\"}", protocol.handle("{\"id\":9,\"op\":\"dance\"}"));
        assertEquals("{\"id\":10,\"ok\":false,\"error\":\"missing field: op (a string)\"}", protocol.handle("{\"id\":10}"));
        assertEquals("{\"id\":11,\"ok\":false,\"error\":\"missing field: text (a string)\"}",
                protocol.handle("{\"id\":11,\"op\":\"text\",\"text\":5}"));
        agent.fail = true;
        assertEquals("{\"id\":12,\"ok\":false,\"error\":\"clipboard service unavailable\"}",
                protocol.handle("{\"id\":12,\"op\":\"clipboard_set\",\"text\":\"x\"}"));
        String badKey = protocol.handle("{\"id\":13,\"op\":\"key\",\"chord\":\"hyper+q\"}");
        assertEquals("{\"id\":13,\"ok\":false,\"error\":\"unknown modifier \\\"hyper\\\" in key chord \\\"hyper+q\\\"\"}", badKey);
        String badGesture = protocol.handle("{\"id\":14,\"op\":\"pointer\",\"gesture\":[{\"x\":1,\"y\":1,\"t_ms\":5},{\"x\":1,\"y\":1,\"t_ms\":4}]}");
        assertTrue(badGesture, badGesture.contains("t_ms must not decrease (4 after 5)"));
        assertTrue(protocol.handle("{\"id\":15,\"op\":\"pointer\",\"gesture\":[]}").contains("non-empty array"));
        assertNull(agent.gesture);
    }

    private String touch(int id, String action, String xy) {
        return protocol.handle("{\"id\":" + id + ",\"op\":\"touch\",\"action\":\"" + action + "\"" + xy + "}");
    }

    @Test
    public void aStreamedTouchIsOneStreamWithTheDownTimeOfItsDown() {
        assertEquals("{\"id\":1,\"ok\":true}", touch(1, "down", ",\"x\":10,\"y\":20.5"));
        assertEquals("{\"id\":2,\"ok\":true}", touch(2, "move", ",\"x\":11,\"y\":21"));
        assertEquals("{\"id\":3,\"ok\":true}", touch(3, "up", ",\"x\":12,\"y\":22"));
        assertEquals(Arrays.asList("touch:0@101/101:10.0,20.5", "touch:2@101/102:11.0,21.0", "touch:1@101/103:12.0,22.0"), agent.calls);
        // The stream ended with its up.
        assertTrue(touch(4, "move", ",\"x\":1,\"y\":1").contains("without a touch down"));
    }

    @Test
    public void aTouchOutOfOrderIsRefusedAndANewDownCancelsOneStillDown() {
        assertEquals("{\"id\":1,\"ok\":false,\"error\":\"touch move without a touch down\"}", touch(1, "move", ",\"x\":1,\"y\":1"));
        assertEquals("{\"id\":2,\"ok\":false,\"error\":\"touch up without a touch down\"}", touch(2, "up", ",\"x\":1,\"y\":1"));
        // A cancel with nothing down has nothing to do.
        assertEquals("{\"id\":3,\"ok\":true}", touch(3, "cancel", ""));
        assertTrue(agent.calls.isEmpty());
        touch(4, "down", ",\"x\":5,\"y\":6");
        touch(5, "move", ",\"x\":7,\"y\":8");
        assertEquals("{\"id\":6,\"ok\":true}", touch(6, "down", ",\"x\":50,\"y\":60"));
        assertEquals("{\"id\":7,\"ok\":true}", touch(7, "cancel", ""));
        assertEquals(Arrays.asList("touch:0@101/101:5.0,6.0", "touch:2@101/102:7.0,8.0",
                "touch:3@101/103:7.0,8.0", "touch:0@104/104:50.0,60.0", "touch:3@104/105:50.0,60.0"), agent.calls);
    }

    @Test
    public void touchFieldsAreChecked() {
        assertEquals("{\"id\":1,\"ok\":false,\"error\":\"missing field: action (a string)\"}",
                protocol.handle("{\"id\":1,\"op\":\"touch\",\"x\":1,\"y\":1}"));
        assertEquals("{\"id\":2,\"ok\":false,\"error\":\"action must be down, move, up or cancel\"}", touch(2, "press", ",\"x\":1,\"y\":1"));
        assertEquals("{\"id\":3,\"ok\":false,\"error\":\"touch down: x and y must be finite numbers\"}", touch(3, "down", ",\"x\":\"1\",\"y\":1"));
        assertEquals("{\"id\":4,\"ok\":false,\"error\":\"touch down: x and y must be finite numbers\"}", touch(4, "down", ",\"x\":1"));
        assertTrue(agent.calls.isEmpty());
    }

    @Test
    public void aFingerStaysDownUntilItsUpWasInjectedAndTheConnectionsEndCancelsIt() {
        touch(1, "down", ",\"x\":1,\"y\":2");
        agent.failTouch = true;
        assertEquals("{\"id\":2,\"ok\":false,\"error\":\"injection refused\"}", touch(2, "up", ",\"x\":3,\"y\":4"));
        agent.failTouch = false;
        protocol.connectionEnded();
        // Still down after the refused up: the end cancels it where it last was.
        assertEquals(Arrays.asList("touch:0@101/101:1.0,2.0", "touch:3@101/103:1.0,2.0"), agent.calls);
        // Nothing down any more: a second end injects nothing.
        protocol.connectionEnded();
        assertEquals(2, agent.calls.size());
    }

    @Test
    public void chords() {
        Chord shiftTab = Chord.parse("Shift+Tab");
        assertEquals(61, shiftTab.keyCode);
        assertEquals(Chord.META_SHIFT_ON, shiftTab.metaState);
        assertArrayEquals(new int[] {59}, shiftTab.modifierKeyCodes);
        assertEquals(66, Chord.parse("enter").keyCode);
        assertEquals(135, Chord.parse("f5").keyCode);
        Chord redo = Chord.parse("ctrl+shift+z");
        assertEquals(54, redo.keyCode);
        assertEquals(Chord.META_CTRL_ON | Chord.META_SHIFT_ON, redo.metaState);
        assertArrayEquals(new int[] {113, 59}, redo.modifierKeyCodes);
        for (String bad : new String[] {"", "ctrl+", "ctrl+ctrl+a", "a+b", "f13"}) {
            try {
                Chord.parse(bad);
                throw new AssertionError("accepted " + bad);
            } catch (IllegalArgumentException expected) {
                assertTrue(expected.getMessage().length() > 0);
            }
        }
    }

    /**
     * test/fixtures/contract/glass/lines.json: what is malformed (and what is not) exactly as the
     * simulator's agent answers it; the vitest tests run the same lines.
     */
    @Test
    public void answersTheSharedLinesAsTheSimulatorDoes() throws Exception {
        List<JSONObject> cases = Fixtures.objects(Fixtures.json("contract/glass/lines.json"), "cases");
        assertTrue(cases.size() > 40);
        for (JSONObject c : cases) {
            assertEquals(c.getString("line"), c.getString("reply"), protocol.handle(c.getString("line")));
        }
        assertTrue(agent.calls.isEmpty()); // ping and refusals reach no handler
    }
}
