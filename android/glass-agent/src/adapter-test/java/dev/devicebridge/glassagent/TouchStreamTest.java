package dev.devicebridge.glassagent;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import android.view.InputDevice;
import android.view.MotionEvent;
import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.FakeSockets;
import dev.devicebridge.glass.common.AcceptLoop;
import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.glass.common.LocalSocketListener;
import java.util.List;
import org.junit.Before;
import org.junit.Test;

/** The streamed touch (the touch op) injected on each profile: one MotionEvent stream per finger. */
public class TouchStreamTest {
    private AgentOnFakes agent;

    @Before
    public void freshDevice() {
        agent = AgentOnFakes.fresh();
    }

    private static String at(double x, double y) {
        return ",\"x\":" + x + ",\"y\":" + y;
    }

    private static void assertEvent(String what, MotionEvent e, int action, long downTime, float x, float y) {
        assertEquals(what + " action: " + e, action, e.getActionMasked());
        assertEquals(what + " downTime: " + e, downTime, e.getDownTime());
        assertEquals(what + " x: " + e, x, e.getX(), 0f);
        assertEquals(what + " y: " + e, y, e.getY(), 0f);
    }

    @Test
    public void downMovesAndUpAreOneStreamWithTheDownTimeOfTheDown() throws Exception {
        agent.ok("touch", "\"action\":\"down\"" + at(100, 200.5));
        // Injected at once: the device has the finger down before anything else is asked.
        assertEquals(1, FakeDevice.Input.motionEvents().size());
        agent.ok("touch", "\"action\":\"move\"" + at(110, 260));
        agent.ok("touch", "\"action\":\"move\"" + at(120, 320));
        agent.ok("touch", "\"action\":\"up\"" + at(125, 330));
        List<MotionEvent> events = FakeDevice.Input.motionEvents();
        assertEquals(events.toString(), 4, events.size());
        long down = events.get(0).getDownTime();
        assertEquals(down, events.get(0).getEventTime());
        assertEvent("down", events.get(0), MotionEvent.ACTION_DOWN, down, 100f, 200.5f);
        assertEvent("move 1", events.get(1), MotionEvent.ACTION_MOVE, down, 110f, 260f);
        assertEvent("move 2", events.get(2), MotionEvent.ACTION_MOVE, down, 120f, 320f);
        assertEvent("up", events.get(3), MotionEvent.ACTION_UP, down, 125f, 330f);
        for (int i = 1; i < events.size(); i++) {
            assertEquals(events.get(i).toString(), true, events.get(i).getEventTime() >= events.get(i - 1).getEventTime());
        }
        for (MotionEvent e : events) {
            assertEquals(e.toString(), 1, e.getPointerCount());
            assertEquals(e.toString(), 0, e.getPointerId(0));
            assertEquals(e.toString(), MotionEvent.TOOL_TYPE_FINGER, e.getToolType(0));
            assertEquals(e.toString(), InputDevice.SOURCE_TOUCHSCREEN, e.getSource());
            assertEquals(e.toString(), 0, e.getButtonState());
            assertEquals(e.toString(), e.getActionMasked() == MotionEvent.ACTION_UP ? 0f : 1f, e.getPressure(), 0f);
        }
    }

    @Test
    public void aDownWhileAFingerIsDownCancelsTheFirstWhereItWas() throws Exception {
        agent.ok("touch", "\"action\":\"down\"" + at(1, 2));
        agent.ok("touch", "\"action\":\"move\"" + at(3, 4));
        agent.ok("touch", "\"action\":\"down\"" + at(50, 60));
        agent.ok("touch", "\"action\":\"cancel\"");
        List<MotionEvent> events = FakeDevice.Input.motionEvents();
        assertEquals(events.toString(), 5, events.size());
        long first = events.get(0).getDownTime();
        long second = events.get(3).getDownTime();
        assertEvent("cancel of the first", events.get(2), MotionEvent.ACTION_CANCEL, first, 3f, 4f);
        assertEvent("second down", events.get(3), MotionEvent.ACTION_DOWN, second, 50f, 60f);
        assertEvent("cancel", events.get(4), MotionEvent.ACTION_CANCEL, second, 50f, 60f);
    }

    @Test
    public void aMoveWithoutADownIsRefusedAndInjectsNothing() throws Exception {
        assertEquals("touch move without a touch down", agent.error("touch", "\"action\":\"move\"" + at(1, 1)));
        assertEquals("touch up without a touch down", agent.error("touch", "\"action\":\"up\"" + at(1, 1)));
        assertEquals(0, FakeDevice.Input.motionEvents().size());
    }

    @Test
    public void aRefusedInjectionNamesTheAndroidApi() throws Exception {
        FakeDevice.Input.failWith(new SecurityException("caller lacks permission"));
        String api = AgentOnFakes.profile().atLeast(34) ? "InputManagerGlobal" : "InputManager";
        assertEquals(api + ".injectInputEvent failed on API " + AgentOnFakes.profile().sdk + ": SecurityException: caller lacks permission",
                agent.error("touch", "\"action\":\"down\"" + at(1, 2)));
    }

    /**
     * Through the agent's own accept loop on its socket: a client that goes away with a finger down
     * leaves no stuck touch; the finger is cancelled where it last was before the socket closes.
     */
    @Test
    public void aConnectionThatEndsWithAFingerDownCancelsIt() throws Exception {
        final LocalSocketListener listener = new LocalSocketListener(Main.SOCKET_NAME);
        Thread loop = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    AcceptLoop.run(listener, JsonLineProtocol.HELLO, Main.handlers(new AndroidAgent()));
                } catch (java.io.IOException closed) {
                    // the listener closed: the test is over
                }
            }
        });
        loop.setDaemon(true);
        loop.start();
        try {
            FakeSockets.Client client = FakeDevice.Sockets.connect(Main.SOCKET_NAME, 2000);
            assertEquals(JsonLineProtocol.HELLO, client.readLine(5000));
            client.send("{\"id\":1,\"op\":\"touch\",\"action\":\"down\",\"x\":10,\"y\":20}");
            assertEquals("{\"id\":1,\"ok\":true}", client.readLine(5000));
            client.send("{\"id\":2,\"op\":\"touch\",\"action\":\"move\",\"x\":30,\"y\":40}");
            assertEquals("{\"id\":2,\"ok\":true}", client.readLine(5000));
            client.close();
            // The server closes its end once the handler is done with the connection.
            assertNull(client.readLine(5000));
            List<MotionEvent> events = FakeDevice.Input.motionEvents();
            assertEquals(events.toString(), 3, events.size());
            long down = events.get(0).getDownTime();
            assertEvent("release", events.get(2), MotionEvent.ACTION_CANCEL, down, 30f, 40f);

            // The next connection has a stream of its own: nothing is down there.
            FakeSockets.Client next = FakeDevice.Sockets.connect(Main.SOCKET_NAME, 2000);
            assertEquals(JsonLineProtocol.HELLO, next.readLine(5000));
            next.send("{\"id\":1,\"op\":\"touch\",\"action\":\"up\",\"x\":1,\"y\":1}");
            assertEquals("{\"id\":1,\"ok\":false,\"error\":\"touch up without a touch down\"}", next.readLine(5000));
            next.close();
            assertNull(next.readLine(5000));
            assertEquals(3, FakeDevice.Input.motionEvents().size());
        } finally {
            listener.close();
            loop.join(5000);
        }
    }
}
