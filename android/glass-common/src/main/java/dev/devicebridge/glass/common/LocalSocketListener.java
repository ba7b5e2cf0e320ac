package dev.devicebridge.glass.common;

import android.net.Credentials;
import android.net.LocalServerSocket;
import android.net.LocalSocket;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * {@link AcceptLoop.Listener} on a device: a LocalServerSocket on localabstract:NAME that serves
 * only root (uid 0) and the shell (uid 2000) — the uids adb forward connects as. Any other local
 * process (an app) is closed on before the banner: the abstract namespace is open to every process
 * on the device, and the glass ops type, paste and read the clipboard as the shell.
 */
public final class LocalSocketListener implements AcceptLoop.Listener {
    static final int ROOT_UID = 0;
    static final int SHELL_UID = 2000;

    private final LocalServerSocket server;

    public LocalSocketListener(String name) throws IOException {
        server = new LocalServerSocket(name);
    }

    /** Whether a peer of {@code uid} may use the socket. */
    static boolean allowed(int uid) {
        return uid == ROOT_UID || uid == SHELL_UID;
    }

    @Override
    public AcceptLoop.Connection accept() throws IOException {
        while (true) {
            final LocalSocket client = server.accept();
            int uid;
            try {
                Credentials peer = client.getPeerCredentials();
                uid = peer == null ? -1 : peer.getUid();
            } catch (IOException e) {
                uid = -1;
            }
            if (allowed(uid)) return connection(client);
            System.err.println("glass: refused a local connection from uid " + uid + " (only root and shell are served)");
            try {
                client.close();
            } catch (IOException ignored) {
                // refused anyway
            }
        }
    }

    private static AcceptLoop.Connection connection(final LocalSocket client) {
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
