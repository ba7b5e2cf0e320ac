package dev.devicebridge.glass.common;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import java.util.ArrayList;
import java.util.List;
import org.json.JSONObject;
import org.junit.Test;

public class JsonLineProtocolTest {
    /** A protocol with one op, "echo" (the request's "text" as the reply's), recording its calls. */
    static final class Echo extends JsonLineProtocol {
        final List<String> ops = new ArrayList<String>();

        @Override
        protected void dispatch(String op, JSONObject request, JSONObject reply) throws Exception {
            ops.add(op);
            if ("echo".equals(op)) {
                reply.put("text", requiredString(request, "text"));
            } else if ("boom".equals(op)) {
                throw new IllegalStateException();
            } else {
                throw unknownOp(op);
            }
        }
    }

    private final Echo protocol = new Echo();

    @Test
    public void repliesCarryTheIdOkAndTheFieldsInOrder() {
        assertEquals("{\"id\":7,\"ok\":true,\"text\":\"h\u00e9 \ud83d\ude80\"}",
                protocol.handle("{\"op\":\"echo\",\"text\":\"h\u00e9 \ud83d\ude80\",\"id\":7}"));
        assertEquals("{\"id\":-3,\"ok\":true,\"text\":\"\"}", protocol.handle("{\"id\":-3,\"op\":\"echo\",\"text\":\"\"}"));
        // 1e0 is the integer 1.
        assertEquals("{\"id\":1,\"ok\":true,\"text\":\"x\"}", protocol.handle("{\"id\":1e0,\"op\":\"echo\",\"text\":\"x\"}"));
    }

    @Test
    public void errorsKeepTheIdAndSayWhy() {
        assertEquals("{\"id\":1,\"ok\":false,\"error\":\"unknown op: dance\"}", protocol.handle("{\"id\":1,\"op\":\"dance\"}"));
        assertEquals("{\"id\":2,\"ok\":false,\"error\":\"missing field: op (a string)\"}", protocol.handle("{\"id\":2}"));
        assertEquals("{\"id\":3,\"ok\":false,\"error\":\"missing field: text (a string)\"}",
                protocol.handle("{\"id\":3,\"op\":\"echo\",\"text\":5}"));
        // No message: the exception's class names the failure.
        assertEquals("{\"id\":4,\"ok\":false,\"error\":\"java.lang.IllegalStateException\"}", protocol.handle("{\"id\":4,\"op\":\"boom\"}"));
        assertEquals("{\"id\":5,\"ok\":false,\"error\":\"missing field: op (a string)\"}", protocol.handle("{\"id\":5,\"op\":7}"));
    }

    @Test
    public void errorsFromReflectiveCallsNameTheExceptionTheCallThrew() {
        Exception wrapped = new java.lang.reflect.InvocationTargetException(new SecurityException("Injecting denied"));
        assertEquals("{\"id\":6,\"ok\":false,\"error\":\"SecurityException: Injecting denied\"}", JsonLineProtocol.error(6, wrapped));
        Exception twice = new java.lang.reflect.InvocationTargetException(new java.lang.reflect.InvocationTargetException(new NullPointerException()));
        assertEquals("NullPointerException", JsonLineProtocol.message(twice));
        // A message-less exception with a cause keeps the cause.
        assertEquals("java.lang.IllegalStateException: IllegalArgumentException: wrong argument type",
                JsonLineProtocol.message(new IllegalStateException((String) null, new IllegalArgumentException("wrong argument type"))));
        assertEquals("plain", JsonLineProtocol.message(new IllegalStateException("plain", new RuntimeException("hidden"))));
    }

    @Test
    public void malformedLinesGetIdMinusOneAndReachNoOp() {
        for (String line : new String[] {"not json", "[1,2]", "\"s\"", "{\"op\":\"echo\"}", "{\"id\":\"7\",\"op\":\"echo\"}",
            "{\"id\":1.5,\"op\":\"echo\"}", "{\"id\":1,\"op\":\"echo\"} trailing", "{id:1,op:echo}", "{\"id\":1,\"id\":2,\"op\":\"echo\"}", "{\"id\":1,",
            "{\"id\":9007199254740992,\"op\":\"echo\"}", "{\"id\":-9007199254740992,\"op\":\"echo\"}", "{\"id\":null}"}) {
            assertEquals(line, JsonLineProtocol.MALFORMED, protocol.handle(line));
        }
        assertEquals("{\"id\":-1,\"ok\":false,\"error\":\"malformed request\"}", JsonLineProtocol.MALFORMED);
        assertEquals("{\"hello\":{\"proto\":1}}", JsonLineProtocol.HELLO);
        assertEquals(0, protocol.ops.size());
    }

    @Test
    public void integersAreExactWithinTwoToThe53() {
        assertEquals(Long.valueOf(9007199254740991L), JsonLineProtocol.integer(9007199254740991L));
        assertEquals(Long.valueOf(-9007199254740991L), JsonLineProtocol.integer(-9007199254740991L));
        assertEquals(Long.valueOf(3), JsonLineProtocol.integer(3));
        assertEquals(Long.valueOf(3), JsonLineProtocol.integer(3.0));
        assertNull(JsonLineProtocol.integer(9007199254740992L));
        assertNull(JsonLineProtocol.integer(3.5));
        assertNull(JsonLineProtocol.integer(Double.POSITIVE_INFINITY));
        assertNull(JsonLineProtocol.integer(Double.NaN));
        assertNull(JsonLineProtocol.integer("3"));
        assertNull(JsonLineProtocol.integer(null));
    }
}
