package dev.devicebridge.snapshothelper;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.devicebridge.fakes.FakeAccessibility;
import dev.devicebridge.fakes.FakeInstrumentation;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The persistent session (-e sessionPort) over real loopback sockets, on the fake UiAutomation. */
public class SessionTest {
    private HelperOnFakes device;
    private int port;
    private boolean quit;

    /** Records the calls the session makes on its server socket, in order. */
    static final class RecordingServerSocket extends ServerSocket {
        final List<String> calls = Collections.synchronizedList(new ArrayList<String>());

        RecordingServerSocket() throws IOException {
            super();
        }

        @Override
        public void setReuseAddress(boolean on) throws java.net.SocketException {
            calls.add("setReuseAddress(" + on + ")" + (isBound() ? " after bind" : ""));
            super.setReuseAddress(on);
        }

        @Override
        public void bind(SocketAddress endpoint, int backlog) throws IOException {
            calls.add("bind(" + endpoint + ")");
            super.bind(endpoint, backlog);
        }
    }

    private final List<RecordingServerSocket> servers = new ArrayList<RecordingServerSocket>();

    private final SnapshotInstrumentation instrumentation = new SnapshotInstrumentation() {
        {
            // A silent client is cut off sooner than on a device: the behaviour is the same.
            sessionReadTimeoutMs = 1000;
        }

        @Override
        ServerSocket newServerSocket() throws IOException {
            RecordingServerSocket s = new RecordingServerSocket();
            servers.add(s);
            return s;
        }
    };

    @Before
    public void startSession() throws Exception {
        device = HelperOnFakes.fresh();
        port = HelperOnFakes.freePort();
        HelperOnFakes.startSession(instrumentation, port);
    }

    @After
    public void quitSession() throws Exception {
        if (!quit) {
            try {
                HelperOnFakes.request(port, "quit cleanup");
            } catch (IOException ignored) {
                // the session is gone already
            }
        }
        // The session finishes after answering quit: let it, before the next test resets the device.
        FakeInstrumentation.awaitResult(10000);
    }

    private HelperOnFakes.Response quit() throws Exception {
        quit = true;
        return HelperOnFakes.request(port, "quit q1").ok();
    }

    @Test
    public void theServerSocketReusesTheAddressBeforeBindingToLoopback() throws Exception {
        assertEquals(1, servers.size());
        assertEquals("[setReuseAddress(true), bind(/127.0.0.1:" + port + ")]", servers.get(0).calls.toString());
    }

    @Test
    public void eachSnapshotSeesTheUiAsItIsNow() throws Exception {
        HelperOnFakes.Response first = HelperOnFakes.request(port, "snapshot r1").ok();
        assertTrue(first.body, first.body.contains("text=\"Go\""));
        device.button.text = "Stop";
        HelperOnFakes.Response second = HelperOnFakes.request(port, "snapshot r2").ok();
        assertTrue(second.body, second.body.contains("text=\"Stop\""));
        assertFalse(second.body, second.body.contains("text=\"Go\""));
        List<String> calls = FakeAccessibility.calls();
        int serviceInfos = 0;
        for (String call : calls) if (call.startsWith("setServiceInfo(")) serviceInfos++;
        if (HelperOnFakes.profile().atLeast(34)) {
            // UiAutomation.clearCache(), as Appium does from Android 14; the flags are set once.
            assertTrue(calls.toString(), calls.contains("clearCache()"));
            assertEquals(calls.toString(), 1, serviceInfos);
        } else {
            // Below 34 there is no clearCache(): setServiceInfo again, which clears the cache.
            assertFalse(calls.toString(), calls.contains("clearCache()"));
            assertTrue(calls.toString(), serviceInfos >= 2);
        }
    }

    @Test
    public void aClientThatSendsNothingDoesNotBlockTheSession() throws Exception {
        Socket silent = new Socket(InetAddress.getByName("127.0.0.1"), port);
        try {
            silent.setSoTimeout(15000);
            long started = System.currentTimeMillis();
            // The next client is served once the silent one times out.
            Socket next = new Socket(InetAddress.getByName("127.0.0.1"), port);
            try {
                next.setSoTimeout(15000);
                next.getOutputStream().write("viewport v1\n".getBytes("UTF-8"));
                HelperOnFakes.Response answer;
                try {
                    answer = HelperOnFakes.Response.read(next.getInputStream());
                } catch (SocketTimeoutException e) {
                    throw new AssertionError("a silent client blocked the session for 15 s");
                }
                answer.ok();
                assertEquals("v1", answer.get("requestId"));
                assertTrue(System.currentTimeMillis() - started < 10000);
            } finally {
                next.close();
            }
            // The silent client was answered with an error and closed.
            HelperOnFakes.Response timedOut = HelperOnFakes.Response.read(silent.getInputStream());
            assertEquals("false", timedOut.get("ok"));
            assertEquals("java.net.SocketTimeoutException", timedOut.get("errorType"));
        } finally {
            silent.close();
        }
    }

    @Test
    public void quitReleasesUiAutomationBeforeAnswering() throws Exception {
        HelperOnFakes.request(port, "snapshot r1").ok();
        assertTrue(FakeAccessibility.uiAutomationConnected());
        quit = true;
        // The host runs `uiautomator dump` (or Appium) as soon as it has read the quit answer,
        // before the session has closed the connection.
        Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), port);
        boolean heldAfterAnswer;
        try {
            socket.setSoTimeout(10000);
            socket.getOutputStream().write("quit q1\n".getBytes("UTF-8"));
            java.io.InputStream in = socket.getInputStream();
            StringBuilder head = new StringBuilder();
            while (head.indexOf("\n\n") < 0) {
                int b = in.read();
                if (b < 0) break;
                head.append((char) b);
            }
            heldAfterAnswer = FakeAccessibility.uiAutomationConnected();
            assertTrue(head.toString(), head.toString().contains("ok=true"));
        } finally {
            socket.close();
        }
        assertFalse("the session still held UiAutomation when its quit answer arrived", heldAfterAnswer);
        FakeAccessibility.anotherClientConnects();
        FakeInstrumentation.Record result = FakeInstrumentation.awaitResult(10000);
        assertEquals(result.bundle.toString(), "true", result.get("sessionEnded"));
        assertEquals(1, FakeInstrumentation.finishes());
        List<String> calls = FakeAccessibility.calls();
        if (HelperOnFakes.profile().atLeast(24)) {
            assertTrue(calls.toString(), calls.contains("destroy()"));
        } else {
            // No destroy() on 6.0: disconnect(), and finish() must not disconnect again.
            assertEquals(calls.toString(), 1, Collections.frequency(calls, "disconnect()"));
        }
    }

    @Test
    public void theSessionServesManyCommandsThenEnds() throws Exception {
        for (int i = 0; i < 3; i++) HelperOnFakes.request(port, "viewport v" + i).ok();
        HelperOnFakes.request(port, "bogus b1");
        HelperOnFakes.request(port, "snapshot r9").ok();
        quit();
        try {
            HelperOnFakes.request(port, "snapshot after");
            fail("the session still listens after quit");
        } catch (IOException expected) {
            // connection refused
        }
    }
}
