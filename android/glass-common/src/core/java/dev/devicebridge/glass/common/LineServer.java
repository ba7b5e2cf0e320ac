package dev.devicebridge.glass.common;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.Charset;

/**
 * One connection of a line-delimited JSON protocol: the banner, then one reply line per request
 * line (UTF-8, "\n"), until the client closes. Blank lines are skipped. Connections are served one
 * at a time by {@link AcceptLoop}.
 */
public final class LineServer {
    /** Maps one request line to its reply line. */
    public interface Handler {
        String handle(String line);
    }

    /**
     * A handler with state of its own connection (a touch still down): {@link AcceptLoop} tells it
     * once when that connection has ended, however it ended (the client left, a broken pipe).
     */
    public interface ConnectionHandler extends Handler {
        void connectionEnded();
    }

    private static final Charset UTF8 = Charset.forName("UTF-8");

    private LineServer() {}

    public static void serve(InputStream in, OutputStream out, String banner, Handler handler) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, UTF8));
        Writer writer = new OutputStreamWriter(out, UTF8);
        writer.write(banner);
        writer.write('\n');
        writer.flush();
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            if (line.trim().isEmpty()) continue;
            writer.write(handler.handle(line));
            writer.write('\n');
            writer.flush();
        }
    }
}
