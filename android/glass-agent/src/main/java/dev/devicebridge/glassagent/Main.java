package dev.devicebridge.glassagent;

import dev.devicebridge.glass.common.AcceptLoop;
import dev.devicebridge.glass.common.JsonLineProtocol;
import dev.devicebridge.glass.common.LineServer;
import dev.devicebridge.glass.common.LocalSocketListener;
import dev.devicebridge.glassagent.core.Agent;
import dev.devicebridge.glassagent.core.AgentProtocol;

/**
 * {@code CLASSPATH=/data/local/tmp/glass-agent.jar app_process / dev.devicebridge.glassagent.Main}:
 * listens on localabstract:glass-agent and serves one client at a time, each with its own {@link AgentProtocol}.
 */
public final class Main {
    public static final String SOCKET_NAME = "glass-agent";

    private Main() {}

    public static void main(String[] args) throws Exception {
        for (String note : Workarounds.apply()) {
            System.err.println("glass-agent: start-up workaround not applied: " + note);
        }
        LocalSocketListener listener = new LocalSocketListener(SOCKET_NAME);
        System.out.println("glass-agent listening on localabstract:" + SOCKET_NAME);
        AcceptLoop.run(listener, JsonLineProtocol.HELLO, handlers(new AndroidAgent()));
    }

    /**
     * A protocol per connection over the one device agent: a connection's streamed touch is its own,
     * and is released when that connection ends.
     */
    static AcceptLoop.Handlers handlers(final Agent agent) {
        return new AcceptLoop.Handlers() {
            @Override
            public LineServer.Handler forConnection() {
                return new AgentProtocol(agent);
            }
        };
    }
}
