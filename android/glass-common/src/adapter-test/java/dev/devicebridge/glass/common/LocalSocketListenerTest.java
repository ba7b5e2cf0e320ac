package dev.devicebridge.glass.common;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.FakeSockets;
import org.json.JSONObject;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The device's listener serves only root and shell: any other local process is closed on, unanswered. */
public class LocalSocketListenerTest {
    private static final String NAME = "glass-test";
    private LocalSocketListener listener;
    private Thread loop;

    @Before
    public void listen() throws Exception {
        FakeDevice.reset();
        listener = new LocalSocketListener(NAME);
        loop = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    AcceptLoop.run(listener, JsonLineProtocol.HELLO, new AcceptLoop.Handlers() {
                        @Override
                        public LineServer.Handler forConnection() {
                            return new JsonLineProtocol() {
                                @Override
                                protected void dispatch(String op, JSONObject request, JSONObject reply) {
                                    if (!"ping".equals(op)) throw unknownOp(op);
                                }
                            };
                        }
                    });
                } catch (java.io.IOException closed) {
                    // the listener closed: the test is over
                }
            }
        });
        loop.setDaemon(true);
        loop.start();
    }

    @After
    public void close() throws Exception {
        listener.close();
        loop.join(5000);
    }

    private static void served(int uid) throws Exception {
        FakeSockets.Client client = FakeDevice.Sockets.connect(NAME, uid);
        assertEquals("uid " + uid, JsonLineProtocol.HELLO, client.readLine(5000));
        client.send("{\"id\":1,\"op\":\"ping\"}");
        assertEquals("uid " + uid, "{\"id\":1,\"ok\":true}", client.readLine(5000));
        client.close();
    }

    @Test
    public void rootAndShellAreServed() throws Exception {
        served(0);
        served(2000);
    }

    @Test
    public void anAppUidIsClosedWithoutABanner() throws Exception {
        for (int uid : new int[] {10123, 1000, 2001, 99000}) {
            FakeSockets.Client app = FakeDevice.Sockets.connect(NAME, uid);
            assertNull("uid " + uid + " got a line", app.readLine(5000));
        }
        // The listener is still serving.
        served(2000);
    }
}
