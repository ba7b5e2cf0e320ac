package dev.devicebridge.glassagent.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.junit.Test;

/** The framing against the golden bytes in test/fixtures/screen/ (the TypeScript codec's tests read them too). */
public class ScreenFramingTest {
    /** A fixture's bytes: hex pairs, "#" comments, whitespace ignored. */
    static byte[] hexFixture(String name) throws IOException {
        String dir = System.getProperty("fixtures");
        if (dir == null) throw new IllegalStateException("-Dfixtures=<repo>/test/fixtures is not set");
        InputStream in = new FileInputStream(new File(dir, "screen/" + name));
        String text;
        try {
            ByteArrayOutputStream raw = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            for (int n = in.read(buffer); n != -1; n = in.read(buffer)) raw.write(buffer, 0, n);
            text = new String(raw.toByteArray(), "UTF-8");
        } finally {
            in.close();
        }
        StringBuilder hex = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            int hash = line.indexOf('#');
            hex.append((hash < 0 ? line : line.substring(0, hash)).replaceAll("\\s+", ""));
        }
        if (hex.length() % 2 != 0 || !hex.toString().matches("[0-9a-fA-F]*")) throw new IllegalStateException(name + " is not hex pairs");
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    private static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) b[i] = (byte) v[i];
        return b;
    }

    @Test
    public void sessionHeaderMatchesTheGoldenBytes() throws Exception {
        assertArrayEquals(hexFixture("java-session-header.hex"), ScreenFraming.sessionHeader(720, 1280, 1080, 1920));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new ScreenFraming.Writer(out).session(720, 1280, 1080, 1920);
        assertArrayEquals(hexFixture("java-session-header.hex"), out.toByteArray());
        assertEquals(ScreenFraming.SESSION_HEADER_BYTES, out.size());
    }

    @Test
    public void packetsMatchTheGoldenBytes() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ScreenFraming.Writer w = new ScreenFraming.Writer(out);
        w.session(720, 1280, 1080, 1920);
        out.reset();
        byte[] sps = bytes(0, 0, 0, 1, 0x67, 0x64, 0, 0x1f, 0, 0, 0, 1, 0x68, 0xee, 0x3c, 0x80);
        w.packet(true, false, 0, sps, 0, sps.length);
        byte[] idr = bytes(0xff, 0, 0, 0, 1, 0x65, 0x88, 0x84, 0, 0xff);
        w.packet(false, true, 33333, idr, 1, 8);
        byte[] p = bytes(0, 0, 1, 0x41, 0x9a, 0x24, 0x6c);
        w.packet(false, false, 66666, p, 0, p.length);
        w.size(1280, 720, 1920, 1080);
        byte[] sps2 = bytes(0, 0, 0, 1, 0x67, 0x64, 0, 0x20, 0, 0, 0, 1, 0x68, 0xee, 0x3c, 0x80);
        w.packet(true, false, 100000, sps2, 0, sps2.length);
        byte[] idr2 = bytes(0, 0, 0, 1, 0x65, 0x88, 0x84, 1);
        w.packet(false, true, 5000000000L, idr2, 0, idr2.length);
        byte[] last = bytes(0, 0, 1, 0x41, 0x9b);
        w.packet(false, false, (1L << 61) - 1, last, 0, last.length);
        assertArrayEquals(hexFixture("java-packets.hex"), out.toByteArray());
    }

    @Test
    public void headerFlagsAndTimeShareTheFirstWord() {
        assertArrayEquals(bytes(0xc0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2), ScreenFraming.packetHeader(ScreenFraming.FLAG_CONFIG | ScreenFraming.FLAG_KEY_FRAME, 1, 2));
        byte[] max = ScreenFraming.packetHeader(0, ScreenFraming.MAX_PTS_US, ScreenFraming.MAX_PAYLOAD_BYTES);
        assertArrayEquals(bytes(0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0), max);
    }

    @Test
    public void outOfRangeValuesAreRefusedByName() {
        String[] messages = new String[5];
        try {
            ScreenFraming.packetHeader(0, 1L << 61, 0);
            fail();
        } catch (IllegalArgumentException e) {
            messages[0] = e.getMessage();
        }
        try {
            ScreenFraming.packetHeader(0, -1, 0);
            fail();
        } catch (IllegalArgumentException e) {
            messages[1] = e.getMessage();
        }
        try {
            ScreenFraming.packetHeader(0, 0, ScreenFraming.MAX_PAYLOAD_BYTES + 1);
            fail();
        } catch (IllegalArgumentException e) {
            messages[2] = e.getMessage();
        }
        try {
            ScreenFraming.packetHeader(1, 0, 0);
            fail();
        } catch (IllegalArgumentException e) {
            messages[3] = e.getMessage();
        }
        try {
            ScreenFraming.sessionHeader(0, 1280, 1080, 1920);
            fail();
        } catch (IllegalArgumentException e) {
            messages[4] = e.getMessage();
        }
        assertTrue(messages[0], messages[0].contains("presentation time"));
        assertTrue(messages[1], messages[1].contains("presentation time -1"));
        assertTrue(messages[2], messages[2].contains("16 MiB"));
        assertTrue(messages[3], messages[3].contains("unknown packet flags"));
        assertTrue(messages[4], messages[4].contains("0x1280"));
    }

    @Test
    public void encoderTimesAreClampedIntoTheField() {
        assertEquals(0, ScreenFraming.clampPts(-5));
        assertEquals(7, ScreenFraming.clampPts(7));
        assertEquals(ScreenFraming.MAX_PTS_US, ScreenFraming.clampPts(Long.MAX_VALUE));
    }

    @Test
    public void packetsNeedTheSessionHeaderFirstAndItIsSentOnce() throws Exception {
        ScreenFraming.Writer w = new ScreenFraming.Writer(new ByteArrayOutputStream());
        try {
            w.size(8, 8, 8, 8);
            fail();
        } catch (IllegalStateException expected) {
            assertTrue(expected.getMessage().contains("session header"));
        }
        w.session(8, 8, 8, 8);
        try {
            w.session(8, 8, 8, 8);
            fail();
        } catch (IllegalStateException expected) {
            assertTrue(expected.getMessage().contains("once"));
        }
    }
}
