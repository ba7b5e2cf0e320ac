package dev.devicebridge.glass.common;

import android.net.LocalServerSocket;
import android.net.LocalSocket;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** {@link AcceptLoop.Listener} on a device: a LocalServerSocket on localabstract:NAME. */
public final class LocalSocketListener implements AcceptLoop.Listener {
    private final LocalServerSocket server;

    public LocalSocketListener(String name) throws IOException {
        server = new LocalServerSocket(name);
    }

    @Override
    public AcceptLoop.Connection accept() throws IOException {
        final LocalSocket client = server.accept();
        return new AcceptLoop.Connection() {
            @Override
            public InputStream input() throws IOException {
                return client.getInputStream();
            }

            @Override
            public OutputStream output() throws IOException {
                return client.getOutputStream();
            }

            @Override
            public void close() throws IOException {
                client.close();
            }
        };
    }

    /** Ends {@link AcceptLoop#run}: a blocked accept throws. */
    public void close() throws IOException {
        server.close();
    }
}
