package dev.devicebridge.glass.common;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * A glass component's server: accepts one client at a time and serves it with {@link LineServer}
 * (the banner, then one reply per request line) and a handler of its own (a fresh protocol state
 * per connection), until the listener closes or the thread is interrupted. A client that goes
 * away, or a handler that throws, ends that connection only; the next client is served. A
 * {@link LineServer.ConnectionHandler} is told when its connection has ended, before the socket is
 * closed and the next client accepted.
 */
public final class AcceptLoop {
    /** One accepted client connection. */
    public interface Connection extends Closeable {
        InputStream input() throws IOException;

        OutputStream output() throws IOException;
    }

    /** Where clients come from (a LocalServerSocket on a device). */
    public interface Listener {
        /** Blocks until a client connects; throws once the listener is closed. */
        Connection accept() throws IOException;
    }

    /** A handler for each new connection. */
    public interface Handlers {
        LineServer.Handler forConnection();
    }

    private AcceptLoop() {}

    /** Returns when the thread is interrupted; throws what {@link Listener#accept} throws. */
    public static void run(Listener listener, String banner, Handlers handlers) throws IOException {
        while (!Thread.currentThread().isInterrupted()) {
            Connection client = listener.accept();
            LineServer.Handler handler = null;
            try {
                handler = handlers.forConnection();
                LineServer.serve(client.input(), client.output(), banner, handler);
            } catch (Exception e) {
                // The client went away mid-line (or a handler broke): serve the next one.
            } finally {
                // Before the socket closes: a client that sees it close knows the handler is done.
                if (handler instanceof LineServer.ConnectionHandler) {
                    try {
                        ((LineServer.ConnectionHandler) handler).connectionEnded();
                    } catch (RuntimeException ignored) {
                        // what it could not undo is its own; the next client is served
                    }
                }
                try {
                    client.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }
}
