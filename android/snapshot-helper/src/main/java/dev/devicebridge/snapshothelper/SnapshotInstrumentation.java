package dev.devicebridge.snapshothelper;

import android.app.Instrumentation;
import android.os.Bundle;
import dev.devicebridge.snapshothelper.core.Fields;
import dev.devicebridge.snapshothelper.core.HelperCore;
import dev.devicebridge.snapshothelper.core.HelperOptions;
import dev.devicebridge.snapshothelper.core.Protocol;
import dev.devicebridge.snapshothelper.core.SessionResponse;
import dev.devicebridge.snapshothelper.core.StatusSink;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code am instrument -w [-e key value ...] dev.devicebridge.snapshothelper/.SnapshotInstrumentation}.
 * Thin: it adapts the device (UiAutomation, the clock, input injection) for {@link HelperCore},
 * which owns every rule of the output contract, and moves Fields into Bundles and session
 * responses into sockets.
 */
public class SnapshotInstrumentation extends Instrumentation {
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
            serve(core, outcome.options, outcome.sessionPort);
            return;
        }
        finish(outcome.code, bundle(outcome.result));
    }

    /** The persistent session: one command per connection on 127.0.0.1:port until quit. */
    private void serve(HelperCore core, HelperOptions options, int port) {
        ServerSocket server;
        try {
            server = new ServerSocket(port, 16, InetAddress.getByName("127.0.0.1"));
            server.setReuseAddress(true);
        } catch (Exception e) {
            finish(Protocol.RESULT_CODE_ERROR, bundle(HelperCore.sessionFailed(options, e)));
            return;
        }
        sendStatus(Protocol.STATUS_CODE_SESSION_READY, bundle(HelperCore.sessionReady(options, port)));
        try {
            boolean quit = false;
            while (!quit) {
                Socket socket = server.accept();
                try {
                    BufferedReader reader = new BufferedReader(new InputStreamReader(socket.getInputStream(), "UTF-8"));
                    SessionResponse response = core.session(reader.readLine(), options);
                    OutputStream out = socket.getOutputStream();
                    out.write(response.toBytes());
                    out.flush();
                    quit = response.quit;
                } catch (Exception e) {
                    // One broken connection does not end the session.
                } finally {
                    try {
                        socket.close();
                    } catch (Exception ignored) {
                        // already closed
                    }
                }
            }
            finish(Protocol.RESULT_CODE_OK, bundle(HelperCore.sessionEnded(options)));
        } catch (Exception e) {
            finish(Protocol.RESULT_CODE_ERROR, bundle(HelperCore.sessionFailed(options, e)));
        } finally {
            try {
                server.close();
            } catch (Exception ignored) {
                // closing anyway
            }
        }
    }

    /** The session's server socket, unbound (tests record what the session does with it). */
    ServerSocket newServerSocket() throws java.io.IOException {
        return new ServerSocket();
    }

    static Bundle bundle(Fields fields) {
        Bundle bundle = new Bundle();
        for (String key : fields.keys()) bundle.putString(key, fields.get(key));
        return bundle;
    }
}
