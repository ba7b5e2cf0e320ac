package dev.devicebridge.glassagent.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.junit.Test;

/** The restart policy and the encoder's settings. */
public class ScreenPolicyTest {
    @Test
    public void anyChangeOfSizeOrRotationRestarts() {
        DisplayState portrait = new DisplayState(1080, 1920, 0);
        assertFalse(DisplayState.needsRestart(portrait, new DisplayState(1080, 1920, 0)));
        assertTrue(DisplayState.needsRestart(portrait, new DisplayState(1920, 1080, 1)));
        assertTrue("180°: same size, still a restart", DisplayState.needsRestart(portrait, new DisplayState(1080, 1920, 2)));
        assertTrue("resolution change", DisplayState.needsRestart(portrait, new DisplayState(720, 1280, 0)));
        assertFalse("an unreadable display keeps the stream", DisplayState.needsRestart(portrait, null));
        assertTrue(DisplayState.needsRestart(null, portrait));
    }

    private static String entries(int sdk) {
        List<EncoderSettings.Entry> list = EncoderSettings.entries(sdk, new VideoSize(720, 1280), ScreenOptions.parse(new String[] {"--socket", "s", "--max-fps", "24.5"}));
        return list.toString();
    }

    @Test
    public void settingsPerApiLevel() {
        assertEquals("[mime=video/avc, width=720, height=1280, bitrate=4000000, frame-rate=25, color-format=2130708361, "
                + "i-frame-interval=2, repeat-previous-frame-after=100000L, max-fps-to-encoder=24.5f]", entries(21));
        assertEquals("[mime=video/avc, width=720, height=1280, bitrate=4000000, frame-rate=25, color-format=2130708361, color-range=2, "
                + "i-frame-interval=2, repeat-previous-frame-after=100000L, priority=0, max-fps-to-encoder=24.5f]", entries(24));
        assertTrue(entries(26).contains("priority=0, latency=1, max-fps-to-encoder=24.5f"));
        assertTrue(entries(35).contains("repeat-previous-frame-after=100000L"));
    }
}
