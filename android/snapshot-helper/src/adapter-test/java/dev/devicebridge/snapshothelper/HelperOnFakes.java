package dev.devicebridge.snapshothelper;

import android.os.Bundle;
import android.view.accessibility.AccessibilityWindowInfo;
import dev.devicebridge.fakes.FakeAccessibility;
import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.FakeInstrumentation;
import dev.devicebridge.fakes.Profile;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * The snapshot helper's {@link SnapshotInstrumentation} run as {@code am instrument -w} would run
 * it, on the fake device of this JVM's profile: an app window (an edit field and a button) under
 * a keyboard window.
 */
final class HelperOnFakes {
    static final String APP = "com.example.app";
    FakeAccessibility.Node button;
    FakeAccessibility.Node field;
    FakeAccessibility.Node keyboardKey;

    static Profile profile() {
        return FakeDevice.profile();
    }

    /** A fresh device showing the app with the keyboard up; OEM injection switches on. */
    static HelperOnFakes fresh() {
        FakeDevice.reset();
        FakeDevice.Input.setSecuritySettingOn(true);
        HelperOnFakes h = new HelperOnFakes();
        FakeAccessibility.Node root = new FakeAccessibility.Node("android.widget.FrameLayout", null, 0, 0, 1080, 2400);
        h.field = new FakeAccessibility.Node("android.widget.EditText", "", 40, 200, 1040, 320);
        h.field.editable = true;
        h.field.focused = true;
        h.field.hint = "Search here";
        h.field.drawingOrder = 1;
        h.button = new FakeAccessibility.Node("android.widget.Button", "Go", 40, 400, 1040, 520);
        h.button.clickable = true;
        h.button.drawingOrder = 2;
        root.add(h.field).add(h.button);
        FakeAccessibility.Node ime = new FakeAccessibility.Node("android.inputmethodservice.SoftInputWindow", null, 0, 1600, 1080, 2400);
        ime.packageName = "com.android.inputmethod.latin";
        h.keyboardKey = new FakeAccessibility.Node("android.widget.Button", "KeyboardKey q", 0, 1600, 108, 1760);
        h.keyboardKey.packageName = ime.packageName;
        ime.add(h.keyboardKey);
        FakeAccessibility.setWindows(
                new FakeAccessibility.Window(AccessibilityWindowInfo.TYPE_INPUT_METHOD, 2, false, false, new int[] {0, 1600, 1080, 2400}, ime),
                new FakeAccessibility.Window(AccessibilityWindowInfo.TYPE_APPLICATION, 1, true, true, new int[] {0, 0, 1080, 2400}, root));
        return h;
    }

    /** One {@code am instrument -w [-e k v]...} run to its end. */
    static Run oneShot(String... extras) throws Exception {
        Bundle arguments = new Bundle();
        for (int i = 0; i < extras.length; i += 2) arguments.putString(extras[i], extras[i + 1]);
        new SnapshotInstrumentation().onCreate(arguments);
        FakeInstrumentation.Record result = FakeInstrumentation.awaitResult(10000);
        return new Run(result);
    }

    /** The result of a run: its fields and, for a snapshot, the XML its chunk statuses carried. */
    static final class Run {
        final FakeInstrumentation.Record result;
        final String xml;

        Run(FakeInstrumentation.Record result) {
            this.result = result;
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (FakeInstrumentation.Record r : FakeInstrumentation.statuses()) {
                if (r.code != 1) continue;
                byte[] chunk = Base64.getDecoder().decode(r.get("payloadBase64"));
                out.write(chunk, 0, chunk.length);
            }
            xml = new String(out.toByteArray(), StandardCharsets.UTF_8);
        }

        String get(String key) {
            return result.get(key);
        }

        /** The run's ok=true result, or an AssertionError with its message. */
        Run ok() {
            if (!"true".equals(get("ok"))) {
                throw new AssertionError("run failed on profile " + profile() + ": " + get("errorType") + ": " + get("message"));
            }
            return this;
        }
    }

    /** A free loopback port. */
    static int freePort() throws Exception {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
        int port = s.getLocalPort();
        s.close();
        return port;
    }

    /** Starts a persistent session on {@code port} and waits for its sessionReady status. */
    static void startSession(SnapshotInstrumentation instrumentation, int port) throws Exception {
        Bundle arguments = new Bundle();
        arguments.putString("sessionPort", String.valueOf(port));
        instrumentation.onCreate(arguments);
        FakeInstrumentation.awaitStatus(2, 10000);
    }

    /** One session command: connect, send the line, read until the server closes. */
    static Response request(int port, String line) throws Exception {
        Socket socket = new Socket(InetAddress.getByName("127.0.0.1"), port);
        try {
            socket.setSoTimeout(10000);
            OutputStream out = socket.getOutputStream();
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            return Response.read(socket.getInputStream());
        } finally {
            socket.close();
        }
    }

    /** A session response: header lines, a blank line, the body. */
    static final class Response {
        final Map<String, String> headers = new TreeMap<String, String>();
        final String body;

        private Response(String text) {
            int split = text.indexOf("\n\n");
            String head = split < 0 ? text : text.substring(0, split);
            body = split < 0 ? "" : text.substring(split + 2);
            for (String l : head.split("\n")) {
                int eq = l.indexOf('=');
                if (eq > 0) headers.put(l.substring(0, eq), l.substring(eq + 1));
            }
        }

        static Response read(InputStream in) throws Exception {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) >= 0) all.write(buf, 0, n);
            return new Response(new String(all.toByteArray(), StandardCharsets.UTF_8));
        }

        String get(String key) {
            return headers.get(key);
        }

        Response ok() {
            if (!"true".equals(get("ok"))) throw new AssertionError("session command failed on profile " + profile() + ": " + headers);
            return this;
        }
    }
}
