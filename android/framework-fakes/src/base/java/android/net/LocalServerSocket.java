/*
 * Fake of frameworks/base/core/java/android/net/LocalServerSocket.java @ android-14.0.0_r1: binds
 * localabstract:NAME in dev.devicebridge.fakes.FakeSockets ("Address already in use" when taken);
 * accept blocks until a test connects; close makes a blocked accept throw.
 */
package android.net;

import dev.devicebridge.fakes.FakeSockets;
import java.io.IOException;

public class LocalServerSocket implements java.io.Closeable {
    private final FakeSockets.Server server;

    public LocalServerSocket(String name) throws IOException {
        server = FakeSockets.bind(name);
    }

    public LocalSocket accept() throws IOException {
        return new LocalSocket(server.accept());
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
