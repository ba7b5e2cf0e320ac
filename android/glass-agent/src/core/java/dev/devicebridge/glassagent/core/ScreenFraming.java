package dev.devicebridge.glassagent.core;

import java.io.IOException;
import java.io.OutputStream;

/**
 * The device stream's framing (docs/live-screen.md, "Device stream framing"), big-endian: a 25-byte
 * session header once ("DBSC", version 1, "h264", video width/height, display width/height), then
 * packets of a 12-byte header (8 bytes: bit 63 CONFIG, bit 62 KEY_FRAME, bit 61 SIZE, bits 0-60
 * the presentation time in microseconds; 4 bytes: the payload length, at most 16 MiB) and the
 * payload. A SIZE packet's payload is 16 bytes (video width, video height, display width, display
 * height) and carries no time (0).
 */
public final class ScreenFraming {
    private ScreenFraming() {}

    public static final int SESSION_HEADER_BYTES = 25;
    public static final int PACKET_HEADER_BYTES = 12;
    public static final int SIZE_PAYLOAD_BYTES = 16;
    public static final int VERSION = 1;
    public static final long FLAG_CONFIG = 1L << 63;
    public static final long FLAG_KEY_FRAME = 1L << 62;
    public static final long FLAG_SIZE = 1L << 61;
    /** Bits 0-60. */
    public static final long MAX_PTS_US = (1L << 61) - 1;
    /** 16 MiB: a larger payload is a protocol error for the reader. */
    public static final int MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
    /** A picture side is at most this (the header fields are 32-bit; encoders stop far below). */
    public static final int MAX_DIMENSION = 65535;

    public static byte[] sessionHeader(int videoWidth, int videoHeight, int displayWidth, int displayHeight) {
        checkSize(videoWidth, videoHeight, displayWidth, displayHeight);
        byte[] b = new byte[SESSION_HEADER_BYTES];
        b[0] = 'D';
        b[1] = 'B';
        b[2] = 'S';
        b[3] = 'C';
        b[4] = VERSION;
        b[5] = 'h';
        b[6] = '2';
        b[7] = '6';
        b[8] = '4';
        putInt(b, 9, videoWidth);
        putInt(b, 13, videoHeight);
        putInt(b, 17, displayWidth);
        putInt(b, 21, displayHeight);
        return b;
    }

    /** A packet header: {@code flags} is a combination of FLAG_CONFIG, FLAG_KEY_FRAME, FLAG_SIZE. */
    public static byte[] packetHeader(long flags, long ptsUs, int length) {
        if ((flags & ~(FLAG_CONFIG | FLAG_KEY_FRAME | FLAG_SIZE)) != 0) throw new IllegalArgumentException("unknown packet flags 0x" + Long.toHexString(flags));
        if (ptsUs < 0 || ptsUs > MAX_PTS_US) throw new IllegalArgumentException("presentation time " + ptsUs + " µs is outside 0 to 2^61-1");
        if (length < 0 || length > MAX_PAYLOAD_BYTES) throw new IllegalArgumentException("payload of " + length + " bytes is outside 0 to 16 MiB");
        byte[] b = new byte[PACKET_HEADER_BYTES];
        long word = flags | ptsUs;
        for (int i = 0; i < 8; i++) b[i] = (byte) (word >>> (56 - 8 * i));
        putInt(b, 8, length);
        return b;
    }

    /** A whole SIZE packet: its header (no time) and the 16-byte payload. */
    public static byte[] sizePacket(int videoWidth, int videoHeight, int displayWidth, int displayHeight) {
        checkSize(videoWidth, videoHeight, displayWidth, displayHeight);
        byte[] b = new byte[PACKET_HEADER_BYTES + SIZE_PAYLOAD_BYTES];
        System.arraycopy(packetHeader(FLAG_SIZE, 0, SIZE_PAYLOAD_BYTES), 0, b, 0, PACKET_HEADER_BYTES);
        putInt(b, 12, videoWidth);
        putInt(b, 16, videoHeight);
        putInt(b, 20, displayWidth);
        putInt(b, 24, displayHeight);
        return b;
    }

    /** An encoder timestamp as the header's time: negative (some encoders' config buffers) is 0. */
    public static long clampPts(long ptsUs) {
        if (ptsUs < 0) return 0;
        return ptsUs > MAX_PTS_US ? MAX_PTS_US : ptsUs;
    }

    private static void checkSize(int vw, int vh, int dw, int dh) {
        int[] all = {vw, vh, dw, dh};
        for (int v : all) {
            if (v < 1 || v > MAX_DIMENSION) {
                throw new IllegalArgumentException("picture size " + vw + "x" + vh + " (display " + dw + "x" + dh + ") has a side outside 1 to " + MAX_DIMENSION);
            }
        }
    }

    private static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    /**
     * Writes the stream to one client: the session header first and once, then packets. Each
     * packet goes out with one write of header and payload together and a flush (a packet is
     * never split by another, and the bridge gets it at once).
     */
    public static final class Writer {
        private final OutputStream out;
        private boolean headerSent;

        public Writer(OutputStream out) {
            this.out = out;
        }

        public synchronized void session(int videoWidth, int videoHeight, int displayWidth, int displayHeight) throws IOException {
            if (headerSent) throw new IllegalStateException("the session header is sent once");
            out.write(sessionHeader(videoWidth, videoHeight, displayWidth, displayHeight));
            out.flush();
            headerSent = true;
        }

        public synchronized void size(int videoWidth, int videoHeight, int displayWidth, int displayHeight) throws IOException {
            requireHeader();
            out.write(sizePacket(videoWidth, videoHeight, displayWidth, displayHeight));
            out.flush();
        }

        /** A CONFIG (SPS/PPS) or frame packet; {@code payload[offset, offset+length)} is Annex B. */
        public synchronized void packet(boolean config, boolean keyFrame, long ptsUs, byte[] payload, int offset, int length) throws IOException {
            requireHeader();
            long flags = (config ? FLAG_CONFIG : 0) | (keyFrame ? FLAG_KEY_FRAME : 0);
            byte[] header = packetHeader(flags, clampPts(ptsUs), length);
            byte[] whole = new byte[PACKET_HEADER_BYTES + length];
            System.arraycopy(header, 0, whole, 0, PACKET_HEADER_BYTES);
            System.arraycopy(payload, offset, whole, PACKET_HEADER_BYTES, length);
            out.write(whole);
            out.flush();
        }

        private void requireHeader() {
            if (!headerSent) throw new IllegalStateException("packets follow the session header");
        }
    }
}
