package dev.devicebridge.glass.common;

import dev.devicebridge.json.StrictJson;
import org.json.JSONException;
import org.json.JSONObject;

/**
 * The request/reply rules both glass components share (seed 001): on connect the device sends
 * {@link #HELLO}; each request line is one JSON object with an integer {@code id} and a string
 * {@code op}; the reply is {@code {"id":id,"ok":true,...fields}} or, when the op fails or is
 * unknown, {@code {"id":id,"ok":false,"error":"..."}} and the connection stays open. A line that
 * is not one strict JSON document ({@link StrictJson}: RFC 8259, no duplicate keys, the bridge's
 * rules; org.json's own tokenizer would read {@code {id:2,op:ping}}) holding an object with an
 * integer id a JSON host holds exactly gets {@link #MALFORMED}. Subclasses answer their ops in
 * {@link #dispatch}. test/fixtures/contract/glass/lines.json holds the lines both this and the
 * simulator answer.
 */
public abstract class JsonLineProtocol implements LineServer.Handler {
    public static final String HELLO = "{\"hello\":{\"proto\":1}}";
    public static final String MALFORMED = "{\"id\":-1,\"ok\":false,\"error\":\"malformed request\"}";
    /** 2^53 - 1: the largest integer a JavaScript host reads exactly. */
    private static final long MAX_SAFE_INTEGER = 9007199254740991L;

    /**
     * Answer {@code op}: add the reply's fields to {@code reply} (it already holds id and ok:true),
     * or throw; an exception's message becomes the reply's error. An unknown op throws
     * {@link #unknownOp}.
     */
    protected abstract void dispatch(String op, JSONObject request, JSONObject reply) throws Exception;

    /** The reply line (without its newline) to one request line. */
    @Override
    public final String handle(String line) {
        Object value;
        try {
            value = StrictJson.parse(line);
        } catch (StrictJson.Failure e) {
            return MALFORMED;
        }
        if (!(value instanceof JSONObject)) return MALFORMED;
        JSONObject request = (JSONObject) value;
        Long parsed = integer(request.opt("id"));
        if (parsed == null) return MALFORMED;
        long id = parsed;
        try {
            JSONObject reply = new JSONObject().put("id", id).put("ok", true);
            String op = requiredString(request, "op");
            dispatch(op, request, reply);
            return reply.toString();
        } catch (Exception e) {
            return error(id, e);
        }
    }

    /** {"id":id,"ok":false,"error":message}: see {@link #message}. */
    public static String error(long id, Exception e) {
        String message = message(e);
        try {
            return new JSONObject().put("id", id).put("ok", false).put("error", message).toString();
        } catch (JSONException impossible) {
            return MALFORMED;
        }
    }

    /**
     * What an error reply says about {@code e}: its message; for a reflection wrapper
     * (InvocationTargetException, UndeclaredThrowableException, ExceptionInInitializerError), the
     * {@link #describe description} of the exception it wraps; without a message, the class name
     * followed by the description of its cause, if any.
     */
    public static String message(Throwable e) {
        Throwable unwrapped = unwrap(e);
        if (unwrapped != e) return describe(unwrapped);
        if (e.getMessage() != null) return e.getMessage();
        Throwable cause = e.getCause();
        return cause == null ? e.getClass().getName() : e.getClass().getName() + ": " + describe(cause);
    }

    /** "SimpleClassName: message" (or the simple class name alone) of {@code e}, unwrapped. */
    public static String describe(Throwable e) {
        Throwable t = unwrap(e);
        String name = t.getClass().getSimpleName();
        return t.getMessage() == null ? name : name + ": " + t.getMessage();
    }

    /** The exception a reflective call threw, through any number of reflection wrappers. */
    public static Throwable unwrap(Throwable e) {
        Throwable t = e;
        for (int depth = 0; depth < 10; depth++) {
            Throwable inner = null;
            if (t instanceof java.lang.reflect.InvocationTargetException) {
                inner = ((java.lang.reflect.InvocationTargetException) t).getTargetException();
            } else if (t instanceof java.lang.reflect.UndeclaredThrowableException) {
                inner = ((java.lang.reflect.UndeclaredThrowableException) t).getUndeclaredThrowable();
            } else if (t instanceof ExceptionInInitializerError) {
                inner = ((ExceptionInInitializerError) t).getException();
            }
            if (inner == null) return t;
            t = inner;
        }
        return t;
    }

    public static IllegalArgumentException unknownOp(String op) {
        return new IllegalArgumentException("unknown op: " + op);
    }

    /** The request's string field {@code key}, or "missing field: KEY (a string)". */
    public static String requiredString(JSONObject request, String key) {
        Object value = request.opt(key);
        if (!(value instanceof String)) throw new IllegalArgumentException("missing field: " + key + " (a string)");
        return (String) value;
    }

    /**
     * An integral JSON number within +-(2^53 - 1) (ids and refs: what a JavaScript host holds
     * exactly), else null.
     */
    public static Long integer(Object value) {
        if (value instanceof Integer || value instanceof Long) {
            long v = ((Number) value).longValue();
            return Math.abs(v) <= MAX_SAFE_INTEGER ? Long.valueOf(v) : null;
        }
        if (value instanceof Double) {
            double d = (Double) value;
            if (d == Math.rint(d) && Math.abs(d) <= (double) MAX_SAFE_INTEGER) return (long) d;
        }
        return null;
    }
}
