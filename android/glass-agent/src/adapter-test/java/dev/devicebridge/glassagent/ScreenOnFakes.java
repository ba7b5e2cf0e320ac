package dev.devicebridge.glassagent;

import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.FakeSockets;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** ScreenMain.run on a thread of its own, its stdout and stderr as lines, and a shell client of its socket. */
final class ScreenOnFakes {
    static final String SOCKET = "screen-test";
    static final long TIMEOUT_MS = 10000;

    /** A stream that hands over each complete line. */
    static final class Lines extends OutputStream {
        final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<String>();
        final StringBuffer all = new StringBuffer();
        private final ByteArrayOutputStream current = new ByteArrayOutputStream();

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                String line;
                try {
                    line = current.toString("UTF-8");
                } catch (java.io.UnsupportedEncodingException e) {
                    throw new IllegalStateException(e);
                }
                current.reset();
                all.append(line).append('\n');
                lines.add(line);
            } else {
                current.write(b);
            }
        }

        String next() throws InterruptedException {
            String line = lines.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (line == null) throw new AssertionError("no line within " + TIMEOUT_MS + " ms; so far: " + all);
            return line;
        }
    }

    final Lines out = new Lines();
    final Lines err = new Lines();
    private final Thread thread;
    private volatile Integer status;

    private ScreenOnFakes(final String[] args) {
        thread = new Thread(new Runnable() {
            @Override
            public void run() {
                status = ScreenMain.run(args, new PrintStream(out, true), new PrintStream(err, true), 5);
            }
        }, "screen-main");
        thread.setDaemon(true);
        thread.start();
    }

    static ScreenOnFakes start(String... args) {
        return new ScreenOnFakes(args);
    }

    /** Waits for the ready line, then connects as the shell. */
    Stream connect() throws Exception {
        String ready = out.next();
        if (!ready.equals("glass-agent screen listening on localabstract:" + SOCKET)) throw new AssertionError("ready line: " + ready + "; stderr: " + err.all);
        return new Stream(FakeDevice.Sockets.connect(SOCKET, 2000));
    }

    /** The exit status once run returns. */
    int exitStatus() throws InterruptedException {
        thread.join(TIMEOUT_MS);
        if (thread.isAlive()) throw new AssertionError("ScreenMain.run did not return; stderr: " + err.all);
        return status;
    }

    static String[] args(String... extra) {
        String[] all = new String[2 + extra.length];
        all[0] = "--socket";
        all[1] = SOCKET;
        System.arraycopy(extra, 0, all, 2, extra.length);
        return all;
    }

    /** One decoded packet of the device stream. */
    static final class Packet {
        final boolean config;
        final boolean key;
        final boolean size;
        final long ptsUs;
        final byte[] payload;

        Packet(long word, byte[] payload) {
            config = word < 0;
            key = (word & (1L << 62)) != 0;
            size = (word & (1L << 61)) != 0;
            ptsUs = word & ((1L << 61) - 1);
            this.payload = payload;
        }

        int intAt(int i) {
            return ((payload[i] & 0xff) << 24) | ((payload[i + 1] & 0xff) << 16) | ((payload[i + 2] & 0xff) << 8) | (payload[i + 3] & 0xff);
        }

        String kind() {
            return (config ? "CONFIG" : "") + (key ? "KEY" : "") + (size ? "SIZE" : "") + (config || key || size ? "" : "FRAME");
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(kind()).append(' ');
            for (byte x : payload) b.append(String.format(java.util.Locale.ROOT, "%02x", x & 0xff));
            return b.toString();
        }
    }

    /** The client's side: the session header, then packets. */
    static final class Stream {
        final FakeSockets.Client client;

        Stream(FakeSockets.Client client) {
            this.client = client;
        }

        /** The session header's four sizes: video w, h, display w, h (after checking magic, version, codec). */
        int[] header() throws IOException {
            byte[] h = client.readBytes(25, TIMEOUT_MS);
            if (h == null) throw new AssertionError("the agent closed the stream before the header");
            String magic = new String(h, 0, 4, "US-ASCII") + h[4] + new String(h, 5, 4, "US-ASCII");
            if (!magic.equals("DBSC1h264")) throw new AssertionError("header starts " + magic);
            int[] sizes = new int[4];
            for (int i = 0; i < 4; i++) {
                int at = 9 + 4 * i;
                sizes[i] = ((h[at] & 0xff) << 24) | ((h[at + 1] & 0xff) << 16) | ((h[at + 2] & 0xff) << 8) | (h[at + 3] & 0xff);
            }
            return sizes;
        }

        /** The next packet; null when the agent closed the stream. */
        Packet packet() throws IOException {
            byte[] h = client.readBytes(12, TIMEOUT_MS);
            if (h == null) return null;
            long word = 0;
            for (int i = 0; i < 8; i++) word = (word << 8) | (h[i] & 0xff);
            int length = ((h[8] & 0xff) << 24) | ((h[9] & 0xff) << 16) | ((h[10] & 0xff) << 8) | (h[11] & 0xff);
            byte[] payload = length == 0 ? new byte[0] : client.readBytes(length, TIMEOUT_MS);
            if (payload == null) throw new AssertionError("the agent closed the stream inside a packet");
            return new Packet(word, payload);
        }

        void leave() {
            client.close();
        }
    }
}
