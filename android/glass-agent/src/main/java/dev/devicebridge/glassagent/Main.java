package dev.devicebridge.glassagent;

import android.net.LocalServerSocket;
import android.net.LocalSocket;
import dev.devicebridge.glassagent.core.AgentProtocol;
import dev.devicebridge.glassagent.core.LineServer;

/**
 * {@code CLASSPATH=/data/local/tmp/glass-agent.jar app_process / dev.devicebridge.glassagent.Main}:
 * listens on localabstract:glass-agent and serves one client at a time with {@link AgentProtocol}.
 */
public final class Main {
    public static final String SOCKET_NAME = "glass-agent";

    private Main() {}

    public static void main(String[] args) throws Exception {
        final AgentProtocol protocol = new AgentProtocol(new AndroidAgent());
        LocalServerSocket server = new LocalServerSocket(SOCKET_NAME);
        System.out.println("glass-agent listening on localabstract:" + SOCKET_NAME);
        while (true) {
            LocalSocket client = server.accept();
            try {
                LineServer.serve(client.getInputStream(), client.getOutputStream(), AgentProtocol.HELLO,
                        new LineServer.Handler() {
                            @Override
                            public String handle(String line) {
                                return protocol.handle(line);
                            }
                        });
            } catch (Exception e) {
                // The client went away mid-line; serve the next one.
            } finally {
                try {
                    client.close();
                } catch (Exception ignored) {
                    // closing anyway
                }
            }
        }
    }
}
