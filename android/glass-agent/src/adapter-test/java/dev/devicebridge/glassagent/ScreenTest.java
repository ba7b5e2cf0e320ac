package dev.devicebridge.glassagent;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import dev.devicebridge.fakes.FakeDevice;
import dev.devicebridge.fakes.FakeDisplays;
import dev.devicebridge.fakes.FakeMedia;
import dev.devicebridge.fakes.Profile;
import java.util.Arrays;
import java.util.List;
import org.junit.Before;
import org.junit.Test;

/** The encoder mode (ScreenMain) on the fake device of this JVM's profile. */
public class ScreenTest {
    private static Profile profile() {
        return FakeDevice.profile();
    }

    @Before
    public void freshDevice() {
        FakeDevice.reset();
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format(java.util.Locale.ROOT, "%02x", x & 0xff));
        return s.toString();
    }

    /** The fake encoder's SPS/PPS for a size (FakeMedia). */
    private static String config(int w, int h) {
        return "0000000167" + "42c01f" + String.format(java.util.Locale.ROOT, "%04x%04x", w, h) + "0000000168ce3c80";
    }

    private static ScreenOnFakes.Packet next(ScreenOnFakes.Stream s, ScreenOnFakes run) throws Exception {
        ScreenOnFakes.Packet p = s.packet();
        if (p == null) throw new AssertionError("the stream ended; stderr: " + run.err.all);
        return p;
    }

    @Test
    public void mirrorsTheDisplayByThePathOfItsApiLevel() throws Exception {
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args("--max-size", "1280"));
        ScreenOnFakes.Stream s = run.connect();
        assertArrayEquals(new int[] {720, 1280, 1080, 1920}, s.header());
        ScreenOnFakes.Packet config = next(s, run);
        assertEquals("CONFIG", config.kind());
        List<FakeDisplays.Mirror> mirrors = FakeDisplays.activeMirrors();
        assertEquals(mirrors.toString(), 1, mirrors.size());
        if (profile().atLeast(34)) {
            assertEquals("DisplayManager.createVirtualDisplay 720x1280", mirrors.get(0).toString());
            assertEquals(Arrays.asList("DisplayManager.createVirtualDisplay(devicebridge-screen, 720, 1280, 0)"), FakeDisplays.calls());
        } else {
            assertEquals("SurfaceControl.createDisplay 720x1280", mirrors.get(0).toString());
            // Secure (protected content shows) before Android 11; the shell may not create one from Android 12.
            boolean secure = profile().sdk < 30;
            assertEquals(Arrays.asList("SurfaceControl.createDisplay(devicebridge-screen, secure=" + secure + ")", "SurfaceControl.openTransaction()",
                    "SurfaceControl.setDisplaySurface()", "SurfaceControl.setDisplayProjection(0, [0,0][1080,1920], [0,0][720,1280])",
                    "SurfaceControl.setDisplayLayerStack(0)", "SurfaceControl.closeTransaction()"), FakeDisplays.calls());
        }
        s.leave();
        assertEquals(0, run.exitStatus());
        assertTrue(FakeDisplays.activeMirrors().isEmpty());
    }

    @Test
    public void configuresTheEncoderWithTheLevelsKeys() throws Exception {
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args("--max-size", "1024", "--bit-rate", "2500000", "--max-fps", "24"));
        ScreenOnFakes.Stream s = run.connect();
        assertArrayEquals(new int[] {576, 1024, 1080, 1920}, s.header());
        next(s, run);
        List<FakeMedia.Encoder> encoders = FakeMedia.encoders();
        // The check before listening, then the client's encoder.
        assertEquals(2, encoders.size());
        int sdk = profile().sdk;
        String expected = "[mime=video/avc, width=576, height=1024, bitrate=2500000, frame-rate=24, color-format=2130708361"
                + (sdk >= 24 ? ", color-range=2" : "") + ", i-frame-interval=2, repeat-previous-frame-after=100000L"
                + (sdk >= 23 ? ", priority=0" : "") + (sdk >= 26 ? ", latency=1" : "") + ", max-fps-to-encoder=24.0f]";
        assertEquals(Arrays.asList(expected), encoders.get(1).formats());
        assertEquals(Arrays.asList(expected), encoders.get(0).formats());
        s.leave();
        assertEquals(0, run.exitStatus());
        assertEquals("released", encoders.get(1).state());
        assertEquals("released", encoders.get(0).state());
    }

    @Test
    public void codecConfigAndKeyFrameFlagsBecomeTheFramingsFlags() throws Exception {
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args());
        ScreenOnFakes.Stream s = run.connect();
        s.header();
        ScreenOnFakes.Packet config = next(s, run);
        assertEquals("CONFIG", config.kind());
        assertEquals(config(720, 1280), hex(config.payload));
        assertEquals(0, config.ptsUs);
        FakeDisplays.draw();
        ScreenOnFakes.Packet key = next(s, run);
        assertEquals("KEY", key.kind());
        assertEquals("0000000165" + "00", hex(key.payload));
        assertEquals(33333, key.ptsUs);
        FakeDisplays.draw();
        ScreenOnFakes.Packet frame = next(s, run);
        assertEquals("FRAME", frame.kind());
        assertEquals("0000000141" + "01", hex(frame.payload));
        assertEquals(66666, frame.ptsUs);
        s.leave();
        assertEquals(0, run.exitStatus());
    }

    @Test
    public void theEncoderIsAskedToRepeatTheLastFrameWhenIdle() throws Exception {
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args());
        ScreenOnFakes.Stream s = run.connect();
        s.header();
        next(s, run);
        FakeDisplays.draw();
        assertEquals("KEY", next(s, run).kind());
        FakeMedia.idle(300); // nothing drawn for 300 ms: three repeats at 100 ms
        for (int i = 0; i < 3; i++) assertEquals("FRAME", next(s, run).kind());
        s.leave();
        assertEquals(0, run.exitStatus());
    }

    @Test
    public void aRotationRestartsTheEncoderWithASizePacketThenConfig() throws Exception {
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args());
        ScreenOnFakes.Stream s = run.connect();
        assertArrayEquals(new int[] {720, 1280, 1080, 1920}, s.header());
        assertEquals("CONFIG", next(s, run).kind());
        FakeDisplays.draw();
        assertEquals("KEY", next(s, run).kind());
        FakeDisplays.rotate(1);
        ScreenOnFakes.Packet size = next(s, run);
        assertEquals("SIZE", size.kind());
        assertEquals(16, size.payload.length);
        assertEquals(0, size.ptsUs);
        assertArrayEquals(new int[] {1280, 720, 1920, 1080}, new int[] {size.intAt(0), size.intAt(4), size.intAt(8), size.intAt(12)});
        ScreenOnFakes.Packet config = next(s, run);
        assertEquals("CONFIG", config.kind());
        assertEquals(config(1280, 720), hex(config.payload));
        FakeDisplays.draw();
        ScreenOnFakes.Packet key = next(s, run);
        assertEquals("the restarted encoder starts with a key frame", "KEY", key.kind());
        List<FakeDisplays.Mirror> mirrors = FakeDisplays.mirrors();
        assertEquals(mirrors.toString(), 2, mirrors.size());
        assertFalse(mirrors.get(0).active());
        assertEquals(1280, mirrors.get(1).width);
        // 180°: the same size, still a restart.
        FakeDisplays.rotate(3);
        size = next(s, run);
        assertEquals("SIZE", size.kind());
        assertArrayEquals(new int[] {1280, 720, 1920, 1080}, new int[] {size.intAt(0), size.intAt(4), size.intAt(8), size.intAt(12)});
        assertEquals("CONFIG", next(s, run).kind());
        s.leave();
        assertEquals(0, run.exitStatus());
        assertTrue(FakeDisplays.activeMirrors().isEmpty());
        assertTrue(run.err.all.toString(), run.err.all.toString().contains("screen: the client left"));
    }

    @Test
    public void anEncoderThatRefusesSizesNotMultipleOf16GetsOne() throws Exception {
        FakeDisplays.setNaturalSize(1080, 2340);
        FakeMedia.refuseSizesNotMultipleOf(16);
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args("--max-size", "0"));
        ScreenOnFakes.Stream s = run.connect();
        assertArrayEquals(new int[] {1072, 2336, 1080, 2340}, s.header());
        List<FakeMedia.Encoder> encoders = FakeMedia.encoders();
        List<String> log = encoders.get(encoders.size() - 1).log();
        assertEquals(log.toString(), "configure 1080x2336", log.get(0));
        assertEquals(log.toString(), "configure 1072x2336", log.get(2));
        s.leave();
        assertEquals(0, run.exitStatus());
    }

    @Test
    public void aDeviceWithoutAnEncoderSaysCannotEncodeAndExits1() throws Exception {
        FakeMedia.setNoEncoder(true);
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args());
        assertEquals(1, run.exitStatus());
        String err = run.err.next();
        assertTrue(err, err.startsWith("screen: cannot encode: no H.264 encoder on API " + profile().sdk + ": IOException: "));
        assertNull("no ready line", run.out.lines.poll());
    }

    @Test
    public void anEncoderThatFailsToStartSaysCannotEncode() throws Exception {
        FakeMedia.failStart(new IllegalStateException("Error 0x80001001"));
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args());
        ScreenOnFakes.Stream s = run.connect();
        assertNull("nothing is sent", s.client.readBytes(1, ScreenOnFakes.TIMEOUT_MS));
        assertEquals(1, run.exitStatus());
        assertTrue(run.err.all.toString(), run.err.all.toString().contains("screen: cannot encode: MediaCodec.start failed for 720x1280 on API " + profile().sdk
                + ": IllegalStateException: Error 0x80001001"));
    }

    @Test
    public void whenNoDisplayPathWorksTheMessageNamesBoth() throws Exception {
        FakeDisplays.failVirtualDisplay(new SecurityException("not allowed to mirror"));
        ScreenOnFakes run = ScreenOnFakes.start(ScreenOnFakes.args());
        ScreenOnFakes.Stream s = run.connect();
        if (!profile().atLeast(34)) {
            // Below 34 the static createVirtualDisplay does not exist; SurfaceControl mirrors.
            s.header();
            assertEquals("SurfaceControl.createDisplay 720x1280", FakeDisplays.activeMirrors().get(0).toString());
            s.leave();
            assertEquals(0, run.exitStatus());
            return;
        }
        assertNull("nothing is sent", s.client.readBytes(1, ScreenOnFakes.TIMEOUT_MS));
        assertEquals(1, run.exitStatus());
        String all = run.err.all.toString();
        assertTrue(all, all.contains("screen: cannot encode: no way to mirror the display: DisplayManager.createVirtualDisplay failed on API " + profile().sdk
                + ": SecurityException: not allowed to mirror; SurfaceControl.createDisplay(String, boolean) does not exist on API " + profile().sdk));
    }

    @Test
    public void badArgumentsAreNamedAndExit2() throws Exception {
        ScreenOnFakes run = ScreenOnFakes.start("--socket", ScreenOnFakes.SOCKET, "--max-fps", "0");
        assertEquals(2, run.exitStatus());
        assertEquals("screen: --max-fps must be a number from 1 to 240 (e.g. 30 or 59.94), got \"0\"", run.err.next());
        assertTrue(FakeMedia.encoders().isEmpty());
    }
}
