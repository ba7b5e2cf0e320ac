package dev.devicebridge.glassagent;

import dev.devicebridge.glass.common.AcceptLoop;
import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.glass.common.LineServer;
import dev.devicebridge.glass.common.LocalSocketListener;
import dev.devicebridge.glassagent.core.AgentProtocol;

/**
 * {@code CLASSPATH=/data/local/tmp/glass-agent.jar app_process / dev.devicebridge.glassagent.Main}:
 * listens on localabstract:glass-agent and serves one client at a time with {@link AgentProtocol}.
 */
public final class Main {
    public static final String SOCKET_NAME = "glass-agent";

    private Main() {}

    public static void main(String[] args) throws Exception {
        for (String note : Workarounds.apply()) {
            System.err.println("glass-agent: start-up workaround not applied: " + note);
        }
        final AgentProtocol protocol = new AgentProtocol(new AndroidAgent());
        LocalSocketListener listener = new LocalSocketListener(SOCKET_NAME);
        System.out.println("glass-agent listening on localabstract:" + SOCKET_NAME);
        AcceptLoop.run(listener, JsonLineProtocol.HELLO, new AcceptLoop.Handlers() {
            @Override
            public LineServer.Handler forConnection() {
                // The agent keeps no state per connection.
                return protocol;
            }
        });
    }
}
