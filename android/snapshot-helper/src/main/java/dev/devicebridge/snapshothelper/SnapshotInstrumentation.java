package dev.devicebridge.snapshothelper;

import android.app.Instrumentation;
import android.os.Bundle;
import dev.devicebridge.snapshothelper.core.Fields;
import dev.devicebridge.snapshothelper.core.HelperCore;
import dev.devicebridge.snapshothelper.core.HelperFailure;
import dev.devicebridge.snapshothelper.core.HelperOptions;
import dev.devicebridge.snapshothelper.core.Protocol;
import dev.devicebridge.snapshothelper.core.SessionResponse;
import dev.devicebridge.snapshothelper.core.StatusSink;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code am instrument -w [-e key value ...] dev.devicebridge.snapshothelper/.SnapshotInstrumentation}.
 * Thin: it adapts the device (UiAutomation, the clock, input injection) for {@link HelperCore},
 * which owns every rule of the output contract, and moves Fields into Bundles and session
 * responses into sockets.
 */
public class SnapshotInstrumentation extends Instrumentation {
    /** How long a session connection may take to send its command line. */
    static final int SESSION_READ_TIMEOUT_MS = 3000;

    /** {@link #SESSION_READ_TIMEOUT_MS} for this run (tests shorten it). */
    int sessionReadTimeoutMs = SESSION_READ_TIMEOUT_MS;

    private final Map<String, String> extras = new HashMap<String, String>();

    @Override
    public void onCreate(Bundle arguments) {
        super.onCreate(arguments);
        if (arguments != null) {
            for (String key : arguments.keySet()) {
                Object value = arguments.get(key);
                if (value != null) extras.put(key, String.valueOf(value));
            }
        }
        start();
    }

    @Override
    public void onStart() {
        super.onStart();
        AndroidDevice device = new AndroidDevice(this);
        HelperCore core = new HelperCore(device, device, device);
        HelperCore.Outcome outcome = core.runOneShot(extras, new StatusSink() {
            @Override
            public void status(int code, Fields fields) {
                sendStatus(code, bundle(fields));
            }
        });
        if (outcome.sessionPort > 0) {
            serve(core, device, outcome.options, outcome.sessionPort);
            return;
        }
        finish(outcome.code, bundle(outcome.result));
    }

    /**
     * The persistent session: one command per connection on 127.0.0.1:port until quit. The address
     * is made reusable before bind (a restarted session must not wait out TIME_WAIT). A client
     * that sends no line within {@link #SESSION_READ_TIMEOUT_MS} is answered with an error and
     * closed, and the next one is served. On quit the UiAutomation connection is released before
     * the answer goes out, so the host can run uiautomator (or Appium) as soon as it has it.
     */
    private void serve(HelperCore core, AndroidDevice device, HelperOptions options, int port) {
        ServerSocket server = null;
        try {
            server = newServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 16);
        } catch (Exception e) {
            close(server);
            finish(Protocol.RESULT_CODE_ERROR, bundle(HelperCore.sessionFailed(options, e)));
            return;
        }
        sendStatus(Protocol.STATUS_CODE_SESSION_READY, bundle(HelperCore.sessionReady(options, port)));
        try {
            boolean quit = false;
            while (!quit) {
                Socket socket = server.accept();
                try {
                    quit = answer(core, device, options, socket, sessionReadTimeoutMs);
                } catch (Exception e) {
                    // One broken connection does not end the session.
                } finally {
                    close(socket);
                }
            }
            finish(Protocol.RESULT_CODE_OK, bundle(HelperCore.sessionEnded(options)));
        } catch (Exception e) {
            device.release();
            finish(Protocol.RESULT_CODE_ERROR, bundle(HelperCore.sessionFailed(options, e)));
        } finally {
            close(server);
        }
    }

    /** Reads one command line (bounded), answers it; true after quit. */
    private static boolean answer(HelperCore core, AndroidDevice device, HelperOptions options, Socket socket,
            int readTimeoutMs) throws Exception {
        socket.setSoTimeout(readTimeoutMs);
        BufferedReader reader = new BufferedReader(new InputStreamReader(socket.getInputStream(), "UTF-8"));
        SessionResponse response;
        try {
            String line = reader.readLine();
            socket.setSoTimeout(0);
            response = core.session(line, options);
        } catch (SocketTimeoutException e) {
            response = new SessionResponse(Protocol.protocolFields().put("requestId", "").putAll(Protocol.errorFields(
                    new HelperFailure("java.net.SocketTimeoutException", "no command line within " + readTimeoutMs + " ms"))),
                    null, false);
        }
        if (response.quit) device.release();
        OutputStream out = socket.getOutputStream();
        out.write(response.toBytes());
        out.flush();
        return response.quit;
    }

    private static void close(java.io.Closeable c) {
        if (c == null) return;
        try {
            c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }

    /** The session's server socket, unbound (a seam: the adapter tests record what the session does with it). */
    ServerSocket newServerSocket() throws java.io.IOException {
        return new ServerSocket();
    }

    static Bundle bundle(Fields fields) {
        Bundle bundle = new Bundle();
        for (String key : fields.keys()) bundle.putString(key, fields.get(key));
        return bundle;
    }
}
