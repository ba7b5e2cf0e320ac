package dev.devicebridge.glassagent.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The MediaFormat an H.264 surface encoder is configured with, per API level, as key/value entries
 * the adapter applies (setInteger/setLong/setFloat/setString by the entry's type). Follows what
 * scrcpy's SurfaceEncoder sets, with the bridge's own key-frame interval:
 *
 * <ul>
 *   <li>{@code repeat-previous-frame-after} 100 ms: an idle screen still produces frames (the last
 *       picture again), so a viewer that joins sees a picture at once and quality recovers; some
 *       encoders ignore it (docs/live-screen.md);
 *   <li>{@code i-frame-interval} 2 s: a viewer that joins or falls behind waits at most that long for a
 *       key frame (the device stream has no way to ask for one);
 *   <li>{@code frame-rate}: must be present to configure; the max fps rounded up (the real rate is
 *       variable);
 *   <li>{@code max-fps-to-encoder}: the max fps (a public key from Android 10, honoured privately
 *       before);
 *   <li>{@code color-range} limited (API 24+), {@code priority} 0 = real time (API 23+),
 *       {@code latency} 1 = a frame out per frame in (API 26+).
 * </ul>
 */
public final class EncoderSettings {
    private EncoderSettings() {}

    public static final String MIME_AVC = "video/avc";
    /** MediaCodecInfo.CodecCapabilities.COLOR_FormatSurface. */
    public static final int COLOR_FORMAT_SURFACE = 0x7F000789;
    /** MediaFormat.COLOR_RANGE_LIMITED (API 24). */
    public static final int COLOR_RANGE_LIMITED = 2;
    public static final long REPEAT_PREVIOUS_FRAME_AFTER_US = 100000;
    public static final int I_FRAME_INTERVAL_S = 2;

    public static final String KEY_MIME = "mime";
    public static final String KEY_WIDTH = "width";
    public static final String KEY_HEIGHT = "height";
    public static final String KEY_BIT_RATE = "bitrate";
    public static final String KEY_FRAME_RATE = "frame-rate";
    public static final String KEY_COLOR_FORMAT = "color-format";
    public static final String KEY_COLOR_RANGE = "color-range";
    public static final String KEY_I_FRAME_INTERVAL = "i-frame-interval";
    public static final String KEY_REPEAT_PREVIOUS_FRAME_AFTER = "repeat-previous-frame-after";
    public static final String KEY_PRIORITY = "priority";
    public static final String KEY_LATENCY = "latency";
    public static final String KEY_MAX_FPS_TO_ENCODER = "max-fps-to-encoder";

    /** One MediaFormat entry; {@link #value} is an Integer, Long, Float or String. */
    public static final class Entry {
        public final String key;
        public final Object value;

        Entry(String key, Object value) {
            this.key = key;
            this.value = value;
        }

        @Override
        public String toString() {
            return key + "=" + value + (value instanceof Long ? "L" : value instanceof Float ? "f" : "");
        }
    }

    public static List<Entry> entries(int sdk, VideoSize size, ScreenOptions options) {
        List<Entry> list = new ArrayList<Entry>();
        list.add(new Entry(KEY_MIME, MIME_AVC));
        list.add(new Entry(KEY_WIDTH, size.width));
        list.add(new Entry(KEY_HEIGHT, size.height));
        list.add(new Entry(KEY_BIT_RATE, options.bitRate));
        list.add(new Entry(KEY_FRAME_RATE, (int) Math.ceil(options.maxFps)));
        list.add(new Entry(KEY_COLOR_FORMAT, COLOR_FORMAT_SURFACE));
        if (sdk >= 24) list.add(new Entry(KEY_COLOR_RANGE, COLOR_RANGE_LIMITED));
        list.add(new Entry(KEY_I_FRAME_INTERVAL, I_FRAME_INTERVAL_S));
        list.add(new Entry(KEY_REPEAT_PREVIOUS_FRAME_AFTER, REPEAT_PREVIOUS_FRAME_AFTER_US));
        if (sdk >= 23) list.add(new Entry(KEY_PRIORITY, 0));
        if (sdk >= 26) list.add(new Entry(KEY_LATENCY, 1));
        list.add(new Entry(KEY_MAX_FPS_TO_ENCODER, options.maxFps));
        return Collections.unmodifiableList(list);
    }
}
