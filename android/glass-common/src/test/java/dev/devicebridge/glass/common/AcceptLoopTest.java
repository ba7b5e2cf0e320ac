package dev.devicebridge.glass.common;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.json.JSONObject;
import org.junit.Test;

public class AcceptLoopTest {
    /** A client that sends `input` and records what it is sent; `brokenAfter` > 0 fails its output after so many writes. */
    static final class FakeClient implements AcceptLoop.Connection {
        final byte[] input;
        final ByteArrayOutputStream received = new ByteArrayOutputStream();
        final int brokenAfter;
        boolean closed;

        FakeClient(String input, int brokenAfter) {
            this.input = input.getBytes(StandardCharsets.UTF_8);
            this.brokenAfter = brokenAfter;
        }

        @Override
        public InputStream input() {
            return new ByteArrayInputStream(input);
        }

        @Override
        public OutputStream output() {
            return new OutputStream() {
                int flushes;

                @Override
                public void write(int b) {
                    received.write(b);
                }

                @Override
                public void flush() throws IOException {
                    if (brokenAfter > 0 && ++flushes > brokenAfter) throw new IOException("Broken pipe");
                }
            };
        }

        @Override
        public void close() {
            closed = true;
        }

        String text() {
            return new String(received.toByteArray(), StandardCharsets.UTF_8);
        }
    }

    /** Hands out the clients in order, then throws as a closed LocalServerSocket does. */
    static final class FakeListener implements AcceptLoop.Listener {
        final Iterator<FakeClient> clients;

        FakeListener(List<FakeClient> clients) {
            this.clients = clients.iterator();
        }

        @Override
        public AcceptLoop.Connection accept() throws IOException {
            if (!clients.hasNext()) throw new IOException("socket closed");
            return clients.next();
        }
    }

    /** Counts requests per connection: a fresh handler per connection starts again at 1. */
    static final class Counter extends JsonLineProtocol {
        int count;

        @Override
        protected void dispatch(String op, JSONObject request, JSONObject reply) throws Exception {
            if (!"count".equals(op)) throw unknownOp(op);
            reply.put("n", ++count);
        }
    }

    @Test
    public void servesClientsOneAtATimeEachWithItsOwnHandlerUntilTheListenerCloses() throws Exception {
        FakeClient first = new FakeClient("{\"id\":1,\"op\":\"count\"}\n{\"id\":2,\"op\":\"count\"}\n", 0);
        // The second client goes away after the banner and one reply: the loop serves the next one.
        FakeClient broken = new FakeClient("{\"id\":1,\"op\":\"count\"}\n{\"id\":2,\"op\":\"count\"}\n{\"id\":3,\"op\":\"count\"}\n", 2);
        FakeClient third = new FakeClient("{\"id\":9,\"op\":\"count\"}\nnope\n", 0);
        final List<Counter> handlers = new ArrayList<Counter>();
        try {
            AcceptLoop.run(new FakeListener(Arrays.asList(first, broken, third)), JsonLineProtocol.HELLO, new AcceptLoop.Handlers() {
                @Override
                public LineServer.Handler forConnection() {
                    Counter c = new Counter();
                    handlers.add(c);
                    return c;
                }
            });
            throw new AssertionError("the loop returned without the listener closing");
        } catch (IOException expected) {
            assertEquals("socket closed", expected.getMessage());
        }
        String hello = JsonLineProtocol.HELLO + "\n";
        assertEquals(hello + "{\"id\":1,\"ok\":true,\"n\":1}\n{\"id\":2,\"ok\":true,\"n\":2}\n", first.text());
        assertTrue(broken.text(), broken.text().startsWith(hello + "{\"id\":1,\"ok\":true,\"n\":1}\n"));
        assertEquals(hello + "{\"id\":9,\"ok\":true,\"n\":1}\n" + JsonLineProtocol.MALFORMED + "\n", third.text());
        assertEquals(3, handlers.size());
        assertTrue(first.closed && broken.closed && third.closed);
    }

    /** Records the requests and the connection's end, with whether its client was closed by then. */
    static final class Ending extends JsonLineProtocol implements LineServer.ConnectionHandler {
        final FakeClient client;
        final List<String> log;

        Ending(FakeClient client, List<String> log) {
            this.client = client;
            this.log = log;
        }

        @Override
        protected void dispatch(String op, JSONObject request, JSONObject reply) throws Exception {
            log.add(op);
        }

        @Override
        public void connectionEnded() {
            log.add("ended (client closed: " + client.closed + ")");
            throw new IllegalStateException("a handler that fails at the end does not stop the loop");
        }
    }

    @Test
    public void aConnectionHandlerIsToldOnceWhenItsConnectionEndsHoweverItEnds() throws Exception {
        final FakeClient left = new FakeClient("{\"id\":1,\"op\":\"first\"}\n", 0);
        final FakeClient broken = new FakeClient("{\"id\":1,\"op\":\"second\"}\n{\"id\":2,\"op\":\"third\"}\n", 1);
        final Iterator<FakeClient> clients = Arrays.asList(left, broken).iterator();
        final List<String> log = new ArrayList<String>();
        try {
            AcceptLoop.run(new FakeListener(Arrays.asList(left, broken)), JsonLineProtocol.HELLO, new AcceptLoop.Handlers() {
                @Override
                public LineServer.Handler forConnection() {
                    return new Ending(clients.next(), log);
                }
            });
            throw new AssertionError("the loop returned without the listener closing");
        } catch (IOException expected) {
            assertEquals("socket closed", expected.getMessage());
        }
        // The broken client's output fails on the reply to its first request: its second is never read.
        // Each handler was told before its socket closed.
        assertEquals(Arrays.asList("first", "ended (client closed: false)", "second", "ended (client closed: false)"), log);
        assertTrue(left.closed && broken.closed);
    }

    @Test
    public void anInterruptedThreadStopsBeforeTheNextAccept() throws Exception {
        FakeClient never = new FakeClient("", 0);
        Thread.currentThread().interrupt();
        try {
            AcceptLoop.run(new FakeListener(Arrays.asList(never)), JsonLineProtocol.HELLO, new AcceptLoop.Handlers() {
                @Override
                public LineServer.Handler forConnection() {
                    return new Counter();
                }
            });
        } finally {
            assertTrue(Thread.interrupted());
        }
        assertEquals("", never.text());
    }
}
