package dev.devicebridge.glassagent.core;

import java.util.HashSet;
import java.util.Set;

/**
 * The encoder mode's arguments: {@code --socket NAME --max-size N --bit-rate BPS --max-fps F}
 * (docs/live-screen.md). {@code --socket} is required; the others default to the WebSocket's
 * defaults (max size 1280, 4 Mbit/s, 30 fps). Each option appears at most once; anything else is
 * refused with a message naming the argument and what it must be.
 */
public final class ScreenOptions {
    public static final int DEFAULT_MAX_SIZE = 1280;
    public static final int DEFAULT_BIT_RATE = 4000000;
    public static final float DEFAULT_MAX_FPS = 30f;

    /** 0 (the display's own size) or at least this many pixels on the long side. */
    public static final int MIN_MAX_SIZE = 64;
    public static final int MAX_MAX_SIZE = 8192;
    public static final int MIN_BIT_RATE = 100000;
    public static final int MAX_BIT_RATE = 200000000;
    public static final float MIN_FPS = 1f;
    public static final float MAX_FPS = 240f;
    /** An abstract socket name: 1-100 of [A-Za-z0-9._-] (what the bridge generates and adb forwards to). */
    public static final int MAX_SOCKET_NAME = 100;

    /** Bad arguments; the message names the argument. */
    public static final class Invalid extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }
    }

    public final String socket;
    /** Long side of the video at most; 0: the display's own size. */
    public final int maxSize;
    public final int bitRate;
    public final float maxFps;

    public ScreenOptions(String socket, int maxSize, int bitRate, float maxFps) {
        this.socket = socket;
        this.maxSize = maxSize;
        this.bitRate = bitRate;
        this.maxFps = maxFps;
    }

    public static ScreenOptions parse(String[] args) {
        String socket = null;
        int maxSize = DEFAULT_MAX_SIZE;
        int bitRate = DEFAULT_BIT_RATE;
        float maxFps = DEFAULT_MAX_FPS;
        Set<String> seen = new HashSet<String>();
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if (!"--socket".equals(name) && !"--max-size".equals(name) && !"--bit-rate".equals(name) && !"--max-fps".equals(name)) {
                throw new Invalid("unknown argument " + quote(name) + " (expected --socket NAME --max-size N --bit-rate BPS --max-fps F)");
            }
            if (!seen.add(name)) throw new Invalid(name + " is given twice");
            if (i + 1 >= args.length) throw new Invalid(name + " needs a value");
            String value = args[++i];
            if ("--socket".equals(name)) {
                socket = socketName(value);
            } else if ("--max-size".equals(name)) {
                maxSize = (int) integer(name, value, 0, MAX_MAX_SIZE);
                if (maxSize != 0 && maxSize < MIN_MAX_SIZE) {
                    throw new Invalid("--max-size must be 0 (the display's size) or " + MIN_MAX_SIZE + " to " + MAX_MAX_SIZE + ", got " + quote(value));
                }
            } else if ("--bit-rate".equals(name)) {
                bitRate = (int) integer(name, value, MIN_BIT_RATE, MAX_BIT_RATE);
            } else {
                maxFps = fps(value);
            }
        }
        if (socket == null) throw new Invalid("--socket NAME is required");
        return new ScreenOptions(socket, maxSize, bitRate, maxFps);
    }

    private static String socketName(String value) {
        boolean ok = !value.isEmpty() && value.length() <= MAX_SOCKET_NAME;
        for (int i = 0; ok && i < value.length(); i++) {
            char c = value.charAt(i);
            ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        }
        if (!ok) throw new Invalid("--socket must be 1-" + MAX_SOCKET_NAME + " characters of A-Z a-z 0-9 . _ -, got " + quote(value));
        return value;
    }

    /** Decimal digits only (no sign, no exponent, no leading zeros except "0"), within [min, max]. */
    private static long integer(String name, String value, long min, long max) {
        String range = min + " to " + max;
        if (value.isEmpty() || value.length() > 10 || (value.length() > 1 && value.charAt(0) == '0')) {
            throw new Invalid(name + " must be a whole number from " + range + ", got " + quote(value));
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') throw new Invalid(name + " must be a whole number from " + range + ", got " + quote(value));
        }
        long n = Long.parseLong(value);
        if (n < min || n > max) throw new Invalid(name + " must be from " + range + ", got " + quote(value));
        return n;
    }

    /** Digits with at most one '.' and digits after it ("30", "59.94"), within [1, 240]. */
    private static float fps(String value) {
        String bad = "--max-fps must be a number from 1 to 240 (e.g. 30 or 59.94), got " + quote(value);
        if (value.isEmpty() || value.length() > 12) throw new Invalid(bad);
        int dot = value.indexOf('.');
        String whole = dot < 0 ? value : value.substring(0, dot);
        String fraction = dot < 0 ? "0" : value.substring(dot + 1);
        if (whole.isEmpty() || fraction.isEmpty() || !digits(whole) || !digits(fraction)) throw new Invalid(bad);
        float f = Float.parseFloat(value);
        if (!(f >= MIN_FPS && f <= MAX_FPS)) throw new Invalid(bad);
        return f;
    }

    private static boolean digits(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') return false;
        }
        return true;
    }

    /** The value as the user typed it, in quotes, control characters escaped, cut at 64 characters. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        int n = Math.min(s.length(), 64);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
                b.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        if (s.length() > n) b.append('…');
        return b.append('"').toString();
    }

    @Override
    public String toString() {
        return "--socket " + socket + " --max-size " + maxSize + " --bit-rate " + bitRate + " --max-fps " + maxFps;
    }
}
