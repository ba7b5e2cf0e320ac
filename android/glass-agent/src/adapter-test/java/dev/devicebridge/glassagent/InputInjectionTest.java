package dev.devicebridge.glassagent;

import static org.junit.Assert.assertEquals;

import android.view.InputDevice;
import android.view.KeyEvent;
import android.view.MotionEvent;
import dev.devicebridge.fakes.FakeDevice;
import java.util.List;
import org.junit.Before;
import org.junit.Test;

public class InputInjectionTest {
    private AgentOnFakes agent;

    @Before
    public void freshDevice() {
        agent = AgentOnFakes.fresh();
    }

    @Test
    public void aTapIsInjectedAsDownThenUpAtThePoint() throws Exception {
        agent.ok("pointer", "\"gesture\":[{\"x\":10.5,\"y\":20,\"t_ms\":0}]");
        List<MotionEvent> events = FakeDevice.Input.motionEvents();
        assertEquals(2, events.size());
        assertEquals(MotionEvent.ACTION_DOWN, events.get(0).getActionMasked());
        assertEquals(MotionEvent.ACTION_UP, events.get(1).getActionMasked());
        for (MotionEvent e : events) {
            assertEquals(10.5f, e.getX(), 0f);
            assertEquals(20f, e.getY(), 0f);
        }
    }

    @Test
    public void aSwipeIsDownMovesThenUpWithOneDownTime() throws Exception {
        agent.ok("pointer", "\"gesture\":[{\"x\":1,\"y\":2,\"t_ms\":0},{\"x\":3,\"y\":4,\"t_ms\":5},{\"x\":5,\"y\":6,\"t_ms\":10}]");
        List<MotionEvent> events = FakeDevice.Input.motionEvents();
        int[] actions = {MotionEvent.ACTION_DOWN, MotionEvent.ACTION_MOVE, MotionEvent.ACTION_MOVE, MotionEvent.ACTION_UP};
        float[] xs = {1, 3, 5, 5};
        assertEquals(actions.length, events.size());
        for (int i = 0; i < actions.length; i++) {
            assertEquals("event " + i, actions[i], events.get(i).getActionMasked());
            assertEquals("event " + i, xs[i], events.get(i).getX(), 0f);
            assertEquals("event " + i, events.get(0).getDownTime(), events.get(i).getDownTime());
        }
        assertEquals(events.get(0).getEventTime() + 10, events.get(3).getEventTime());
    }

    @Test
    public void touchesComeFromAFingerOnTheTouchscreen() throws Exception {
        agent.ok("pointer", "\"gesture\":[{\"x\":1,\"y\":2,\"t_ms\":0},{\"x\":3,\"y\":4,\"t_ms\":1}]");
        for (MotionEvent e : FakeDevice.Input.motionEvents()) {
            assertEquals(e.toString(), 1, e.getPointerCount());
            assertEquals(e.toString(), MotionEvent.TOOL_TYPE_FINGER, e.getToolType(0));
            assertEquals(e.toString(), InputDevice.SOURCE_TOUCHSCREEN, e.getSource());
        }
    }

    @Test
    public void aChordPressesTheModifiersAroundTheKeyAndReleasesThemInReverse() throws Exception {
        agent.ok("key", "\"chord\":\"ctrl+shift+z\"");
        List<KeyEvent> keys = FakeDevice.Input.keyEvents();
        int[][] expected = {
            {KeyEvent.ACTION_DOWN, KeyEvent.KEYCODE_CTRL_LEFT}, {KeyEvent.ACTION_DOWN, KeyEvent.KEYCODE_SHIFT_LEFT},
            {KeyEvent.ACTION_DOWN, 54}, {KeyEvent.ACTION_UP, 54},
            {KeyEvent.ACTION_UP, KeyEvent.KEYCODE_SHIFT_LEFT}, {KeyEvent.ACTION_UP, KeyEvent.KEYCODE_CTRL_LEFT},
        };
        assertEquals(keys.toString(), expected.length, keys.size());
        for (int i = 0; i < expected.length; i++) {
            assertEquals(keys.get(i).toString(), expected[i][0], keys.get(i).getAction());
            assertEquals(keys.get(i).toString(), expected[i][1], keys.get(i).getKeyCode());
        }
        int meta = keys.get(2).getMetaState();
        assertEquals(KeyEvent.META_CTRL_ON | KeyEvent.META_SHIFT_ON, meta & (KeyEvent.META_CTRL_ON | KeyEvent.META_SHIFT_ON));
    }

    @Test
    public void keyEventsComeFromTheKeyboard() throws Exception {
        agent.ok("key", "\"chord\":\"shift+tab\"");
        agent.ok("key", "\"chord\":\"enter\"");
        List<KeyEvent> keys = FakeDevice.Input.keyEvents();
        assertEquals(6, keys.size());
        for (KeyEvent k : keys) assertEquals(k.toString(), InputDevice.SOURCE_KEYBOARD, k.getSource());
    }

    @Test
    public void aRefusedInjectionNamesTheAndroidApiAndTheApiLevel() throws Exception {
        FakeDevice.Input.failWith(new SecurityException("caller lacks permission"));
        String api = AgentOnFakes.profile().atLeast(34) ? "InputManagerGlobal" : "InputManager";
        String expected = api + ".injectInputEvent failed on API " + AgentOnFakes.profile().sdk + ": SecurityException: caller lacks permission";
        assertEquals(expected, agent.error("pointer", "\"gesture\":[{\"x\":1,\"y\":2,\"t_ms\":0}]"));
        assertEquals(expected, agent.error("key", "\"chord\":\"a\""));
        assertEquals(expected, agent.error("text", "\"text\":\"a\""));
    }
}
