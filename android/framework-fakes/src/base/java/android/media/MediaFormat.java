/*
 * Fake of frameworks/base/media/java/android/media/MediaFormat.java @ android-6.0.1_r1 (the API-23
 * surface: KEY_LATENCY, KEY_COLOR_RANGE are newer and left out, as in android-23.jar): a typed map.
 * A key set twice keeps the last value and type; getInteger on a key of another type throws
 * ClassCastException, a missing key NullPointerException, as AOSP's does.
 */
package android.media;

import java.util.LinkedHashMap;
import java.util.Map;

public final class MediaFormat {
    public static final String MIMETYPE_VIDEO_AVC = "video/avc";
    public static final String KEY_MIME = "mime";
    public static final String KEY_WIDTH = "width";
    public static final String KEY_HEIGHT = "height";
    public static final String KEY_BIT_RATE = "bitrate";
    public static final String KEY_FRAME_RATE = "frame-rate";
    public static final String KEY_COLOR_FORMAT = "color-format";
    public static final String KEY_I_FRAME_INTERVAL = "i-frame-interval";
    public static final String KEY_REPEAT_PREVIOUS_FRAME_AFTER = "repeat-previous-frame-after";
    public static final String KEY_PRIORITY = "priority";

    private final Map<String, Object> map = new LinkedHashMap<String, Object>();

    public MediaFormat() {}

    public synchronized void setInteger(String name, int value) {
        map.remove(name);
        map.put(name, Integer.valueOf(value));
    }

    public synchronized void setLong(String name, long value) {
        map.remove(name);
        map.put(name, Long.valueOf(value));
    }

    public synchronized void setFloat(String name, float value) {
        map.remove(name);
        map.put(name, Float.valueOf(value));
    }

    public synchronized void setString(String name, String value) {
        map.remove(name);
        map.put(name, value);
    }

    public synchronized boolean containsKey(String name) {
        return map.containsKey(name);
    }

    public synchronized int getInteger(String name) {
        return ((Integer) map.get(name)).intValue();
    }

    public synchronized long getLong(String name) {
        return ((Long) map.get(name)).longValue();
    }

    public synchronized float getFloat(String name) {
        return ((Float) map.get(name)).floatValue();
    }

    public synchronized String getString(String name) {
        return (String) map.get(name);
    }

    /** Fake-only: every entry as "key=value" with L/f suffixes for long/float, in the order set. */
    public synchronized String entries() {
        StringBuilder b = new StringBuilder("[");
        for (Map.Entry<String, Object> e : map.entrySet()) {
            if (b.length() > 1) b.append(", ");
            Object v = e.getValue();
            b.append(e.getKey()).append('=').append(v).append(v instanceof Long ? "L" : v instanceof Float ? "f" : "");
        }
        return b.append(']').toString();
    }

    @Override
    public synchronized String toString() {
        return "MediaFormat" + entries();
    }
}
