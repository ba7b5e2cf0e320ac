package dev.devicebridge.glassagent.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.Random;
import org.junit.Test;

public class VideoSizeTest {
    private static String size(int w, int h, int max) {
        return VideoSize.compute(w, h, max, 8).toString();
    }

    @Test
    public void theLongSideIsCappedAndTheAspectRatioKept() {
        assertEquals("720x1280", size(1080, 1920, 1280));
        assertEquals("1280x720", size(1920, 1080, 1280));
        assertEquals("576x1280", size(1080, 2400, 1280));
        assertEquals("592x1280", size(1440, 3120, 1280));
        assertEquals("1080x1920", size(1080, 1920, 0));
        assertEquals("1080x1920", size(1080, 1920, 4000));
        assertEquals("800x800", size(1000, 1000, 800));
    }

    @Test
    public void sidesAreMultiplesOfTheAlignment() {
        assertEquals("1080x2336", size(1080, 2340, 0));
        assertEquals("720x1272", size(720, 1275, 0));
        assertEquals("1072x2336", VideoSize.compute(1080, 2340, 0, 16).toString());
        assertEquals("8x64", size(3, 64, 0));
    }

    /** Seeded property run: within the max size, aligned, aspect ratio within one alignment step. */
    @Test
    public void anyDisplayGivesAnAlignedPictureOfItsShape() {
        Random random = new Random(7);
        for (int run = 0; run < 20000; run++) {
            int w = 16 + random.nextInt(4000);
            int h = 16 + random.nextInt(4000);
            int max = random.nextInt(4) == 0 ? 0 : 64 + random.nextInt(4000);
            int align = random.nextBoolean() ? 8 : 16;
            VideoSize s = VideoSize.compute(w, h, max, align);
            String what = w + "x" + h + " max " + max + " align " + align + " -> " + s;
            assertEquals(what, 0, s.width % align);
            assertEquals(what, 0, s.height % align);
            int longSide = Math.max(s.width, s.height);
            assertTrue(what, longSide <= Math.max(align, max == 0 ? Math.max(w, h) : Math.min(max, Math.max(w, h))));
            assertTrue(what, w > h ? s.width >= s.height : w < h ? s.height >= s.width : s.width == s.height);
            double expectedShort = (double) Math.min(w, h) * longSide / Math.max(w, h);
            assertTrue(what, Math.abs(Math.min(s.width, s.height) - expectedShort) <= align / 2.0 + 1e-9 || Math.min(s.width, s.height) == align);
        }
    }

    @Test
    public void fallbacksAlignTo16ThenShrink() {
        List<VideoSize> attempts = VideoSize.attempts(1080, 2340, 0);
        assertEquals("[1080x2336, 1072x2336, 880x1920, 736x1600, 592x1280, 480x1024, 368x800]", attempts.toString());
        assertEquals("[720x1280, 576x1024, 448x800]", VideoSize.attempts(1080, 1920, 1280).toString());
    }
}
