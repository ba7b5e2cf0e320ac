/*
 * Fake of frameworks/base/core/java/android/net/LocalSocket.java @ android-14.0.0_r1: an accepted
 * connection's streams, close, and getPeerCredentials (SO_PEERCRED: the connecting process's pid,
 * uid, gid), from dev.devicebridge.fakes.FakeSockets.
 */
package android.net;

import dev.devicebridge.fakes.FakeSockets;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

public class LocalSocket implements java.io.Closeable {
    private final FakeSockets.Peer peer;
    private boolean closed;

    LocalSocket(FakeSockets.Peer peer) {
        this.peer = peer;
    }

    public InputStream getInputStream() throws IOException {
        if (closed) throw new IOException("socket closed");
        return peer.in;
    }

    public OutputStream getOutputStream() throws IOException {
        if (closed) throw new IOException("socket closed");
        return peer.out;
    }

    public Credentials getPeerCredentials() throws IOException {
        return new Credentials(peer.pid, peer.uid, peer.uid);
    }

    @Override
    public void close() throws IOException {
        closed = true;
        peer.close();
    }
}
