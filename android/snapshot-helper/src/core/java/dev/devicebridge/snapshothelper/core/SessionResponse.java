package dev.devicebridge.snapshothelper.core;

import java.io.UnsupportedEncodingException;

/**
 * A persistent-session response: {@code key=value} header lines (keys in String order, CR and LF
 * in values replaced by spaces), a blank line, then the body (the XML for snapshots, nothing
 * otherwise). The server closes the connection after it.
 */
public final class SessionResponse {
    public final Fields headers;
    public final byte[] body;
    /** True for the answer to {@code quit}: the session ends after sending it. */
    public final boolean quit;

    public SessionResponse(Fields headers, byte[] body, boolean quit) {
        this.headers = headers;
        this.body = body == null ? new byte[0] : body;
        this.quit = quit;
    }

    public byte[] toBytes() {
        StringBuilder head = new StringBuilder(256);
        for (String key : headers.sortedKeys()) {
            head.append(key).append('=').append(headers.get(key).replace('\r', ' ').replace('\n', ' ')).append('\n');
        }
        head.append('\n');
        byte[] h = utf8(head.toString());
        byte[] out = new byte[h.length + body.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(body, 0, out, h.length, body.length);
        return out;
    }

    static byte[] utf8(String s) {
        try {
            return s.getBytes("UTF-8");
        } catch (UnsupportedEncodingException e) {
            throw new IllegalStateException(e);
        }
    }
}
