package dev.devicebridge.fakes;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.charset.Charset;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The abstract local socket namespace behind the fake {@code android.net.LocalServerSocket}: a
 * server registers a name, a test {@link #connect connects} as some uid, the server's accept
 * returns the peer with those credentials. Streams are in-memory pipes.
 */
public final class FakeSockets {
    private FakeSockets() {}

    private static final Charset UTF8 = Charset.forName("UTF-8");
    private static final Map<String, Server> SERVERS = new HashMap<String, Server>();

    static synchronized void reset() {
        for (Server s : SERVERS.values()) s.close();
        SERVERS.clear();
    }

    /** One end of a connection as the server sees it. */
    public static final class Peer {
        public final int pid;
        public final int uid;
        public final InputStream in;
        public final OutputStream out;
        private final Pipe toServer;
        private final Pipe toClient;

        Peer(int pid, int uid, Pipe toServer, Pipe toClient) {
            this.pid = pid;
            this.uid = uid;
            this.toServer = toServer;
            this.toClient = toClient;
            this.in = toServer.input();
            this.out = toClient.output();
        }

        public void close() {
            toServer.close();
            toClient.close();
        }
    }

    /** A listening name. */
    public static final class Server {
        private final String name;
        private final ArrayDeque<Peer> pending = new ArrayDeque<Peer>();
        private boolean closed;

        Server(String name) {
            this.name = name;
        }

        public synchronized Peer accept() throws IOException {
            while (pending.isEmpty()) {
                if (closed) throw new IOException("socket closed");
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("accept interrupted");
                }
            }
            return pending.removeFirst();
        }

        synchronized void offer(Peer p) {
            pending.addLast(p);
            notifyAll();
        }

        public synchronized void close() {
            closed = true;
            notifyAll();
            synchronized (FakeSockets.class) {
                if (SERVERS.get(name) == this) SERVERS.remove(name);
            }
        }
    }

    /** Binds localabstract:NAME (the fake LocalServerSocket's constructor). */
    public static synchronized Server bind(String name) throws IOException {
        if (SERVERS.containsKey(name)) throw new IOException("Address already in use");
        Server s = new Server(name);
        SERVERS.put(name, s);
        return s;
    }

    private static int nextPid = 4000;

    /** A test's client, connected as uid {@code uid}. */
    public static Client connect(String name, int uid) throws IOException {
        Server s;
        int pid;
        synchronized (FakeSockets.class) {
            s = SERVERS.get(name);
            pid = nextPid++;
        }
        if (s == null) throw new IOException("Connection refused: nothing listens on localabstract:" + name);
        Pipe toServer = new Pipe();
        Pipe toClient = new Pipe();
        s.offer(new Peer(pid, uid, toServer, toClient));
        return new Client(toServer, toClient);
    }

    /** The test's end: write lines, read lines with a deadline. */
    public static final class Client {
        private final Pipe toServer;
        private final Pipe toClient;

        Client(Pipe toServer, Pipe toClient) {
            this.toServer = toServer;
            this.toClient = toClient;
        }

        public void send(String line) throws IOException {
            OutputStream out = toServer.output();
            out.write((line + "\n").getBytes(UTF8));
            out.flush();
        }

        /** The next line, or null when the server closed the connection; throws after timeoutMs. */
        public String readLine(long timeoutMs) throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (true) {
                int b = toClient.read(deadline);
                if (b < 0) return line.size() == 0 ? null : new String(line.toByteArray(), UTF8);
                if (b == '\n') return new String(line.toByteArray(), UTF8);
                line.write(b);
            }
        }

        /**
         * Exactly {@code n} bytes the server sent; null when the server closed the connection before
         * the first of them; throws when it closed midway or after timeoutMs.
         */
        public byte[] readBytes(int n, long timeoutMs) throws IOException {
            byte[] out = new byte[n];
            long deadline = System.currentTimeMillis() + timeoutMs;
            for (int i = 0; i < n; i++) {
                int b = toClient.read(deadline);
                if (b < 0) {
                    if (i == 0) return null;
                    throw new IOException("the server closed the connection after " + i + " of " + n + " bytes");
                }
                out[i] = (byte) b;
            }
            return out;
        }

        public void close() {
            toServer.close();
        }
    }

    /** A one-way in-memory byte pipe; closing either end ends it. */
    static final class Pipe {
        private final ArrayDeque<Byte> bytes = new ArrayDeque<Byte>();
        private boolean closed;

        synchronized void write(byte[] b, int off, int len) throws IOException {
            if (closed) throw new IOException("Broken pipe");
            for (int i = 0; i < len; i++) bytes.addLast(b[off + i]);
            notifyAll();
        }

        /**
         * A byte, -1 at the end; deadline 0 waits forever. A LocalSocket's read is a blocking
         * native read: Thread.interrupt() does not end it (only closing the socket does), so a
         * read without a deadline (the server's stream) waits through interrupts and restores the
         * flag; the test side's read (with a deadline) stops.
         */
        synchronized int read(long deadline) throws IOException {
            boolean interrupted = false;
            try {
                while (bytes.isEmpty()) {
                    if (closed) return -1;
                    long wait = deadline == 0 ? 0 : deadline - System.currentTimeMillis();
                    if (deadline != 0 && wait <= 0) throw new IOException("timed out waiting for the server");
                    try {
                        wait(wait);
                    } catch (InterruptedException e) {
                        if (deadline != 0) {
                            interrupted = true;
                            throw new InterruptedIOException();
                        }
                        interrupted = true;
                    }
                }
                return bytes.removeFirst() & 0xff;
            } finally {
                if (interrupted) Thread.currentThread().interrupt();
            }
        }

        synchronized void close() {
            closed = true;
            notifyAll();
        }

        InputStream input() {
            return new InputStream() {
                @Override
                public int read() throws IOException {
                    return Pipe.this.read(0);
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (len == 0) return 0;
                    int first = Pipe.this.read(0);
                    if (first < 0) return -1;
                    b[off] = (byte) first;
                    int n = 1;
                    synchronized (Pipe.this) {
                        while (n < len && !bytes.isEmpty()) b[off + n++] = bytes.removeFirst();
                    }
                    return n;
                }

                @Override
                public void close() {
                    Pipe.this.close();
                }
            };
        }

        OutputStream output() {
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    Pipe.this.write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    Pipe.this.write(b, off, len);
                }

                @Override
                public void close() {
                    Pipe.this.close();
                }
            };
        }
    }
}
