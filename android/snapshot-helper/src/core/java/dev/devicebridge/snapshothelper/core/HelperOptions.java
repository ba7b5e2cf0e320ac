package dev.devicebridge.snapshothelper.core;

import java.util.Map;

/**
 * The instrumentation arguments ({@code -e key value}) with the seed's defaults. Numbers are
 * parsed like Java's Long/Integer.parseLong of the trimmed text (ASCII digits only); an empty or
 * missing value takes the default; a negative value counts as 0.
 */
public final class HelperOptions {
    public static final long DEFAULT_WAIT_FOR_IDLE_TIMEOUT_MS = 500;
    public static final long DEFAULT_WAIT_FOR_IDLE_QUIET_MS = 100;
    public static final long DEFAULT_TIMEOUT_MS = 8000;
    public static final int DEFAULT_MAX_DEPTH = 128;
    public static final int DEFAULT_MAX_NODES = 5000;

    public final long waitForIdleTimeoutMs;
    public final long waitForIdleQuietMs;
    public final long timeoutMs;
    public final int maxDepth;
    public final int maxNodes;

    public HelperOptions(long waitForIdleTimeoutMs, long waitForIdleQuietMs, long timeoutMs, int maxDepth, int maxNodes) {
        this.waitForIdleTimeoutMs = waitForIdleTimeoutMs;
        this.waitForIdleQuietMs = waitForIdleQuietMs;
        this.timeoutMs = timeoutMs;
        this.maxDepth = maxDepth;
        this.maxNodes = maxNodes;
    }

    public static HelperOptions defaults() {
        return new HelperOptions(DEFAULT_WAIT_FOR_IDLE_TIMEOUT_MS, DEFAULT_WAIT_FOR_IDLE_QUIET_MS,
                DEFAULT_TIMEOUT_MS, DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES);
    }

    /** @throws NumberFormatException for a value that is not a decimal integer of the key's width */
    public static HelperOptions parse(Map<String, String> extras) {
        return new HelperOptions(
                longExtra(extras, "waitForIdleTimeoutMs", DEFAULT_WAIT_FOR_IDLE_TIMEOUT_MS),
                longExtra(extras, "waitForIdleQuietMs", DEFAULT_WAIT_FOR_IDLE_QUIET_MS),
                longExtra(extras, "timeoutMs", DEFAULT_TIMEOUT_MS),
                intExtra(extras, "maxDepth", DEFAULT_MAX_DEPTH),
                intExtra(extras, "maxNodes", DEFAULT_MAX_NODES));
    }

    /** The five option fields of a snapshot result, in the seed's order. */
    public Fields metadata() {
        return Protocol.protocolFields()
                .put("waitForIdleTimeoutMs", waitForIdleTimeoutMs)
                .put("waitForIdleQuietMs", waitForIdleQuietMs)
                .put("timeoutMs", timeoutMs)
                .put("maxDepth", maxDepth)
                .put("maxNodes", maxNodes);
    }

    /** The trimmed value, or null when missing or blank. */
    public static String stringExtra(Map<String, String> extras, String key) {
        String raw = extras.get(key);
        if (raw == null) return null;
        raw = raw.trim();
        return raw.isEmpty() ? null : raw;
    }

    public static long longExtra(Map<String, String> extras, String key, long fallback) {
        String raw = stringExtra(extras, key);
        if (raw == null) return fallback;
        long value = Long.parseLong(checkDigits(raw));
        return value < 0 ? 0 : value;
    }

    public static int intExtra(Map<String, String> extras, String key, int fallback) {
        String raw = stringExtra(extras, key);
        if (raw == null) return fallback;
        int value = Integer.parseInt(checkDigits(raw));
        return value < 0 ? 0 : value;
    }

    /** parseLong also takes non-ASCII digits (e.g. Arabic-Indic); the protocol does not. */
    private static String checkDigits(String raw) {
        int start = raw.charAt(0) == '+' || raw.charAt(0) == '-' ? 1 : 0;
        boolean ok = raw.length() > start;
        for (int i = start; i < raw.length() && ok; i++) {
            char c = raw.charAt(i);
            ok = c >= '0' && c <= '9';
        }
        if (!ok) throw new NumberFormatException("For input string: \"" + raw + "\"");
        return raw;
    }
}
