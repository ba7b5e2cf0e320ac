package dev.devicebridge.glassagent;

import dev.devicebridge.glass.common.AcceptLoop;
import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.glass.common.LocalSocketListener;
import dev.devicebridge.glassagent.core.ScreenOptions;
import java.io.IOException;
import java.io.PrintStream;

/**
 * The glass agent's encoder mode (docs/live-screen.md):
 * {@code CLASSPATH=<jar> app_process / dev.devicebridge.glassagent.ScreenMain --socket NAME --max-size N --bit-rate BPS --max-fps F}.
 *
 * <p>Checks that the device can encode ({@link ScreenStreamer#preflight}), listens on
 * localabstract:NAME (root and shell only, glass-common's {@link LocalSocketListener}), prints
 * {@code glass-agent screen listening on localabstract:NAME}, serves one client with the H.264
 * stream and exits when that client leaves. Exit status: 0 the client left; 1 encoding failed
 * ({@code screen: cannot encode: …} on stderr: the bridge falls back to screenrecord); 2 bad
 * arguments ({@code screen: …}); 3 the socket could not be bound.
 */
public final class ScreenMain {
    static final int EXIT_CLIENT_LEFT = 0;
    static final int EXIT_CANNOT_ENCODE = 1;
    static final int EXIT_BAD_ARGUMENTS = 2;
    static final int EXIT_CANNOT_LISTEN = 3;

    private ScreenMain() {}

    public static void main(String[] args) {
        for (String note : Workarounds.apply()) {
            System.err.println("screen: start-up workaround not applied: " + note);
        }
        System.exit(run(args, System.out, System.err, ScreenStreamer.DEFAULT_POLL_MS));
    }

    /** The whole run, for main and the tests: returns the exit status. */
    static int run(String[] args, PrintStream out, PrintStream err, long pollMs) {
        ScreenOptions options;
        try {
            options = ScreenOptions.parse(args);
        } catch (ScreenOptions.Invalid e) {
            err.println("screen: " + e.getMessage());
            return EXIT_BAD_ARGUMENTS;
        }
        ScreenStreamer streamer = new ScreenStreamer(options, pollMs);
        try {
            err.println("screen: " + streamer.preflight());
        } catch (ScreenStreamer.CannotEncode e) {
            err.println("screen: cannot encode: " + e.getMessage());
            return EXIT_CANNOT_ENCODE;
        } catch (RuntimeException e) {
            err.println("screen: cannot encode: " + JsonLineProtocol.describe(e));
            return EXIT_CANNOT_ENCODE;
        }
        LocalSocketListener listener;
        try {
            listener = new LocalSocketListener(options.socket);
        } catch (IOException e) {
            err.println("screen: cannot listen on localabstract:" + options.socket + ": " + JsonLineProtocol.describe(e));
            return EXIT_CANNOT_LISTEN;
        }
        try {
            out.println("glass-agent screen listening on localabstract:" + options.socket);
            out.flush();
            AcceptLoop.Connection client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                err.println("screen: accepting a client failed: " + JsonLineProtocol.describe(e));
                return EXIT_CANNOT_LISTEN;
            }
            try {
                streamer.stream(client.input(), client.output());
                err.println("screen: the client left");
                return EXIT_CLIENT_LEFT;
            } catch (ScreenStreamer.CannotEncode e) {
                err.println("screen: cannot encode: " + e.getMessage());
                return EXIT_CANNOT_ENCODE;
            } catch (IOException e) {
                err.println("screen: the client left: " + JsonLineProtocol.describe(e));
                return EXIT_CLIENT_LEFT;
            } catch (RuntimeException e) {
                err.println("screen: cannot encode: " + JsonLineProtocol.describe(e));
                return EXIT_CANNOT_ENCODE;
            } finally {
                try {
                    client.close();
                } catch (IOException ignored) {
                    // leaving anyway
                }
            }
        } finally {
            try {
                listener.close();
            } catch (IOException ignored) {
                // leaving anyway
            }
        }
    }
}
