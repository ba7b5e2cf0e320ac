package dev.devicebridge.snapshothelper.core;

/**
 * Standard base64 with padding and no line breaks. Neither java.util.Base64 (API 26) nor
 * android.util.Base64 (not on the JVM) exists on both sides, so the helper carries its own.
 */
public final class Base64Codec {
    private static final char[] ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".toCharArray();
    private static final int[] VALUES = new int[128];

    static {
        for (int i = 0; i < VALUES.length; i++) VALUES[i] = -1;
        for (int i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET[i]] = i;
    }

    private Base64Codec() {}

    public static String encode(byte[] data, int offset, int length) {
        StringBuilder out = new StringBuilder((length + 2) / 3 * 4);
        int end = offset + length;
        int i = offset;
        for (; i + 2 < end; i += 3) {
            int n = (data[i] & 0xff) << 16 | (data[i + 1] & 0xff) << 8 | (data[i + 2] & 0xff);
            out.append(ALPHABET[n >>> 18]).append(ALPHABET[n >>> 12 & 63])
                    .append(ALPHABET[n >>> 6 & 63]).append(ALPHABET[n & 63]);
        }
        int rest = end - i;
        if (rest == 1) {
            int n = (data[i] & 0xff) << 16;
            out.append(ALPHABET[n >>> 18]).append(ALPHABET[n >>> 12 & 63]).append("==");
        } else if (rest == 2) {
            int n = (data[i] & 0xff) << 16 | (data[i + 1] & 0xff) << 8;
            out.append(ALPHABET[n >>> 18]).append(ALPHABET[n >>> 12 & 63]).append(ALPHABET[n >>> 6 & 63]).append('=');
        }
        return out.toString();
    }

    public static String encode(byte[] data) {
        return encode(data, 0, data.length);
    }

    /**
     * The text without the spaces, tabs, CRs and LFs around it (a payload from a shell often ends in
     * a newline). Nothing else is stripped: the bridge strips exactly these (touch-plan.ts).
     */
    public static String stripSpace(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isSpace(text.charAt(start))) start++;
        while (end > start && isSpace(text.charAt(end - 1))) end--;
        return text.substring(start, end);
    }

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
    }

    /**
     * Strict decoding: surrounding spaces, tabs, CRs and LFs are ignored ({@link #stripSpace});
     * otherwise only the standard alphabet, a length that is a multiple of four, and padding only at
     * the end.
     *
     * @throws IllegalArgumentException when the text is not such base64
     */
    public static byte[] decode(String text) {
        String s = stripSpace(text);
        if (s.length() % 4 != 0) throw new IllegalArgumentException("payloadBase64 is not valid base64");
        int pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
        byte[] out = new byte[s.length() / 4 * 3 - pad];
        int o = 0;
        for (int i = 0; i < s.length(); i += 4) {
            int n = 0;
            for (int j = 0; j < 4; j++) {
                char c = s.charAt(i + j);
                int v;
                if (c == '=' && i + 4 == s.length() && j >= 4 - pad) v = 0;
                else if (c < 128 && VALUES[c] >= 0) v = VALUES[c];
                else throw new IllegalArgumentException("payloadBase64 is not valid base64");
                n = n << 6 | v;
            }
            if (o < out.length) out[o++] = (byte) (n >>> 16);
            if (o < out.length) out[o++] = (byte) (n >>> 8);
            if (o < out.length) out[o++] = (byte) n;
        }
        return out;
    }
}
