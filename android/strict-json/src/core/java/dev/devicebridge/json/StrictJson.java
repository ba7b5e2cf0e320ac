package dev.devicebridge.json;

import java.util.ArrayList;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;

/**
 * JSON as strict as RFC 8259 and the bridge (src/strict-json.ts, whose rules and error messages this
 * is a port of). org.json's own tokenizer accepts far more: unquoted keys and strings, single quotes,
 * comments, octal and hex numbers ({@code 010} read as 8), ";" and "=>" separators, trailing commas,
 * and the last of duplicate keys silently wins. This parser has RFC 8259's grammar and refuses,
 * before building anything beyond the offending point:
 *
 * <ul>
 *   <li>a document longer than {@code maxBytes} UTF-8 bytes;</li>
 *   <li>nesting deeper than {@code maxDepth} containers (no stack overflow on a line of brackets);</li>
 *   <li>a key that appears twice in one object;</li>
 *   <li>the keys {@code __proto__}, {@code constructor} and {@code prototype}, at any depth (the
 *   bridge refuses them: one rule for both ends);</li>
 *   <li>a number outside a double's range ({@code 1e400}).</li>
 * </ul>
 *
 * Values are org.json's: {@link JSONObject} (keys in document order), {@link JSONArray},
 * {@link String}, {@link Boolean}, {@link JSONObject#NULL}, and numbers typed as org.json types
 * them (Integer or Long for an integer literal a JavaScript host holds exactly, else Double).
 * Failures are {@link Failure}s whose message names the rule, the line and column (UTF-16 units,
 * from 1) and the JSON path, word for word as the bridge's parser names them.
 */
public final class StrictJson {
    public static final int DEFAULT_MAX_DEPTH = 64;
    public static final long DEFAULT_MAX_BYTES = 1048576L;
    private static final long MAX_SAFE_INTEGER = 9007199254740991L;
    private static final int MAX_SHOWN = 48;

    /** A document StrictJson refuses; {@link #rule} is syntax, duplicate-key, prototype-key, depth or size. */
    public static final class Failure extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        public final String rule;

        Failure(String rule, String message) {
            super(message);
            this.rule = rule;
        }
    }

    private final String src;
    private final int maxDepth;
    private int pos;
    /** The path to the value being read: String keys and Integer indexes. */
    private final List<Object> path = new ArrayList<Object>();

    private StrictJson(String src, int maxDepth) {
        this.src = src;
        this.maxDepth = maxDepth;
    }

    public static Object parse(String text) {
        return parse(text, DEFAULT_MAX_DEPTH, DEFAULT_MAX_BYTES);
    }

    /** @throws Failure when the text is not one strict JSON document within the limits */
    public static Object parse(String text, int maxDepth, long maxBytes) {
        if ((long) text.length() * 3 > maxBytes) {
            long bytes = utf8Length(text);
            if (bytes > maxBytes) {
                throw new Failure("size", "JSON: the document is " + bytes + " bytes, over the limit of "
                        + maxBytes + " bytes");
            }
        }
        return new StrictJson(text, maxDepth).document();
    }

    /** UTF-8 bytes of a string (an unpaired surrogate counts as the 3 bytes of U+FFFD). */
    static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) n += 1;
            else if (c < 0x800) n += 2;
            else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else n += 3;
        }
        return n;
    }

    private Object document() {
        skipSpace();
        Object value = value(0);
        skipSpace();
        if (pos < src.length()) throw fail("syntax", "unexpected content after the document", null);
        return value;
    }

    private int at(int i) {
        return i < src.length() ? src.charAt(i) : -1;
    }

    private Object value(int depth) {
        if (pos >= src.length()) throw fail("syntax", "unexpected end of input, expected a value", null);
        char ch = src.charAt(pos);
        switch (ch) {
            case '{':
                return object(depth + 1);
            case '[':
                return array(depth + 1);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", JSONObject.NULL);
            default:
                if (ch == '-' || (ch >= '0' && ch <= '9')) return number();
                throw fail("syntax", "unexpected character, expected a value", null);
        }
    }

    private JSONObject object(int depth) {
        if (depth > maxDepth) throw depthError();
        pos++; // {
        JSONObject out = new JSONObject();
        skipSpace();
        if (at(pos) == '}') {
            pos++;
            return out;
        }
        for (;;) {
            if (at(pos) != '"') throw fail("syntax", "expected a string key", null);
            int keyAt = pos;
            String key = string();
            if ("__proto__".equals(key) || "constructor".equals(key) || "prototype".equals(key)) {
                pos = keyAt;
                throw fail("prototype-key", "the key " + describe(key) + " is not allowed", key);
            }
            if (out.has(key)) {
                pos = keyAt;
                throw fail("duplicate-key", "duplicate key " + describe(key), key);
            }
            skipSpace();
            if (at(pos) != ':') throw fail("syntax", "expected ':' after a key", null);
            pos++;
            skipSpace();
            path.add(key);
            Object member = value(depth);
            path.remove(path.size() - 1);
            try {
                out.put(key, member);
            } catch (JSONException impossible) {
                throw new IllegalStateException(impossible);
            }
            if (memberEnd('}', "an object")) return out;
        }
    }

    private JSONArray array(int depth) {
        if (depth > maxDepth) throw depthError();
        pos++; // [
        JSONArray out = new JSONArray();
        skipSpace();
        if (at(pos) == ']') {
            pos++;
            return out;
        }
        for (;;) {
            path.add(Integer.valueOf(out.length()));
            out.put(value(depth));
            path.remove(path.size() - 1);
            if (memberEnd(']', "an array")) return out;
        }
    }

    /** After a member: "," means another follows (false); the closing character ends the container (true). */
    private boolean memberEnd(char close, String container) {
        skipSpace();
        int next = at(pos);
        if (next == ',') {
            pos++;
            skipSpace();
            return false;
        }
        if (next == close) {
            pos++;
            return true;
        }
        if (next == -1) throw fail("syntax", "unexpected end of input in " + container, null);
        throw fail("syntax", "expected ',' or '" + close + "'", null);
    }

    private String string() {
        int i = pos + 1; // after the opening quote
        StringBuilder out = new StringBuilder();
        for (;;) {
            if (i >= src.length()) {
                pos = i;
                throw fail("syntax", "unterminated string", null);
            }
            char c = src.charAt(i);
            if (c == '"') {
                pos = i + 1;
                return out.toString();
            }
            if (c < 0x20) {
                pos = i;
                throw fail("syntax", "control character in a string", null);
            }
            if (c != '\\') {
                out.append(c);
                i++;
                continue;
            }
            int esc = at(i + 1);
            if (esc == 'u') {
                int code = i + 6 <= src.length() ? hex4(i + 2) : -1;
                if (code < 0) {
                    pos = i;
                    throw fail("syntax", "invalid \\u escape in a string", null);
                }
                out.append((char) code);
                i += 6;
                continue;
            }
            char decoded;
            switch (esc) {
                case '"': decoded = '"'; break;
                case '\\': decoded = '\\'; break;
                case '/': decoded = '/'; break;
                case 'b': decoded = '\b'; break;
                case 'f': decoded = '\f'; break;
                case 'n': decoded = '\n'; break;
                case 'r': decoded = '\r'; break;
                case 't': decoded = '\t'; break;
                default:
                    pos = i;
                    throw fail("syntax", "invalid escape in a string", null);
            }
            out.append(decoded);
            i += 2;
        }
    }

    private int hex4(int from) {
        int code = 0;
        for (int k = from; k < from + 4; k++) {
            int d = Character.digit(src.charAt(k), 16);
            char c = src.charAt(k);
            boolean ascii = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
            if (d < 0 || !ascii) return -1;
            code = code * 16 + d;
        }
        return code;
    }

    /** JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, the longest match. */
    private Object number() {
        int i = pos;
        if (at(i) == '-') i++;
        if (at(i) == '0') i++;
        else if (at(i) >= '1' && at(i) <= '9') {
            while (at(i) >= '0' && at(i) <= '9') i++;
        } else throw fail("syntax", "invalid number", null);
        boolean integral = true;
        if (at(i) == '.' && at(i + 1) >= '0' && at(i + 1) <= '9') {
            integral = false;
            i += 2;
            while (at(i) >= '0' && at(i) <= '9') i++;
        }
        if (at(i) == 'e' || at(i) == 'E') {
            int j = i + 1;
            if (at(j) == '+' || at(j) == '-') j++;
            if (at(j) >= '0' && at(j) <= '9') {
                integral = false;
                while (at(j) >= '0' && at(j) <= '9') j++;
                i = j;
            }
        }
        String text = src.substring(pos, i);
        if (integral && i - pos <= 17) {
            long v = Long.parseLong(text);
            if (Math.abs(v) <= MAX_SAFE_INTEGER) {
                pos = i;
                if (v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE) return Integer.valueOf((int) v);
                return Long.valueOf(v);
            }
        }
        double d = Double.parseDouble(text);
        if (Double.isInfinite(d)) throw fail("syntax", "number out of range", null);
        pos = i;
        return Double.valueOf(d);
    }

    private Object literal(String word, Object value) {
        if (!src.startsWith(word, pos)) throw fail("syntax", "unexpected character, expected a value", null);
        pos += word.length();
        return value;
    }

    private void skipSpace() {
        for (;;) {
            int c = at(pos);
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t') pos++;
            else return;
        }
    }

    private Failure depthError() {
        return fail("depth", "nesting deeper than " + maxDepth + " levels", null);
    }

    private Failure fail(String rule, String what, String key) {
        int line = 1;
        int lineStart = 0;
        int end = Math.min(pos, src.length());
        for (int i = 0; i < end; i++) {
            if (src.charAt(i) == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        List<Object> parts = new ArrayList<Object>(path);
        if (key != null) parts.add(key);
        return new Failure(rule, "JSON: " + what + " at line " + line + ", column " + (end - lineStart + 1)
                + " (path " + renderPath(parts) + ")");
    }

    /** {@code $.a.b[3]}, keys that are not identifiers quoted and escaped: {@code $["x y"]}. */
    static String renderPath(List<Object> parts) {
        StringBuilder out = new StringBuilder("$");
        for (Object part : parts) {
            if (part instanceof Integer) out.append('[').append(part).append(']');
            else {
                String key = (String) part;
                if (key.length() <= 48 && isIdentifier(key)) out.append('.').append(key);
                else out.append('[').append(describe(key)).append(']');
            }
        }
        return out.toString();
    }

    private static boolean isIdentifier(String s) {
        if (s.isEmpty()) return false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$';
            if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
        }
        return true;
    }

    /**
     * A finite double as JavaScript's {@code String(n)} writes it (the bridge's messages show numbers
     * so): the shortest digits that read back as {@code d}, plain from 1e-7 up to 1e21, else
     * {@code 1.5e+21} / {@code 1e-7}; {@code -0} is "0".
     */
    public static String jsNumber(double d) {
        if (Double.isNaN(d)) return "NaN";
        if (Double.isInfinite(d)) return d > 0 ? "Infinity" : "-Infinity";
        if (d == 0) return "0";
        if (d < 0) return "-" + jsNumber(-d);
        // The fewest significant digits that read back as d (Double.toString is not always shortest
        // before Java 19: 4.9E-324 for what JavaScript writes 5e-324).
        java.math.BigDecimal exact = null;
        for (int p = 1; p <= 17; p++) {
            exact = new java.math.BigDecimal(d).round(new java.math.MathContext(p, java.math.RoundingMode.HALF_EVEN));
            if (exact.doubleValue() == d) break;
        }
        exact = exact.stripTrailingZeros();
        String digits = exact.unscaledValue().toString();
        int k = digits.length();
        int n = k - exact.scale(); // d = 0.digits x 10^n
        StringBuilder out = new StringBuilder();
        if (k <= n && n <= 21) {
            out.append(digits);
            for (int i = k; i < n; i++) out.append('0');
        } else if (0 < n && n <= 21) {
            out.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-6 < n && n <= 0) {
            out.append("0.");
            for (int i = n; i < 0; i++) out.append('0');
            out.append(digits);
        } else {
            int e = n - 1;
            out.append(digits.charAt(0));
            if (k > 1) out.append('.').append(digits, 1, k);
            out.append('e').append(e < 0 ? '-' : '+').append(Math.abs(e));
        }
        return out.toString();
    }

    /**
     * A string for an error message, as the bridge's describeValue writes it: quoted, every character
     * outside printable ASCII escaped, cut after 48 code points with the full count.
     */
    public static String describe(String s) {
        StringBuilder out = new StringBuilder("\"");
        int count = s.codePointCount(0, s.length());
        int shown = 0;
        for (int i = 0; i < s.length() && shown < MAX_SHOWN; shown++) {
            int code = s.codePointAt(i);
            i += Character.charCount(code);
            if (code == '"') out.append("\\\"");
            else if (code == '\\') out.append("\\\\");
            else if (code >= 0x20 && code <= 0x7e) out.append((char) code);
            else if (code == '\t') out.append("\\t");
            else if (code == '\n') out.append("\\n");
            else if (code == '\r') out.append("\\r");
            else if (code <= 0xffff) out.append(String.format("\\u%04x", code));
            else out.append("\\u{").append(Integer.toHexString(code)).append('}');
        }
        out.append('"');
        if (count > MAX_SHOWN) out.append("... (").append(count).append(" characters)");
        return out.toString();
    }
}
