/*
 * Fake of frameworks/base/core/java/android/view/KeyCharacterMap.java @ android-14.0.0_r1 and of
 * the virtual keyboard's map, frameworks/base/data/keyboards/Virtual.kcm @ android-14.0.0_r1 (the
 * US layout: letters, digits, ASCII punctuation, space, tab, enter, and the diacritical dead keys
 * on right-alt: E -> U+0301 acute, GRAVE -> U+0300 grave, I -> U+0302 circumflex, N -> U+0303
 * tilde, U -> U+0308 umlaut, which get() reports with COMBINING_ACCENT set). Characters not on
 * the map (e with accent, CJK, emoji) make getEvents return null, as on a device. Events from
 * getEvents carry SOURCE_KEYBOARD and the map's device id (native KeyCharacterMap::getEvents).
 */
package android.view;

import java.text.Normalizer;
import java.util.HashMap;
import java.util.Map;

public class KeyCharacterMap {
    public static final int VIRTUAL_KEYBOARD = -1;
    public static final int BUILT_IN_KEYBOARD = 0;
    public static final int COMBINING_ACCENT = 0x80000000;
    public static final int COMBINING_ACCENT_MASK = 0x7FFFFFFF;
    public static final int FULL = 4;

    /** char -> {keyCode, meta}. */
    private static final Map<Character, int[]> EVENTS = new HashMap<Character, int[]>();
    /** keyCode:meta -> char (meta reduced to none, shift or ralt). */
    private static final Map<String, Integer> CHARS = new HashMap<String, Integer>();
    private static final int SHIFT = KeyEvent.META_SHIFT_ON | KeyEvent.META_SHIFT_LEFT_ON;
    private static final int RALT = KeyEvent.META_ALT_ON | KeyEvent.META_ALT_RIGHT_ON;

    static {
        for (char c = 'a'; c <= 'z'; c++) {
            key(c, KeyEvent.KEYCODE_A + (c - 'a'), 0);
            key(Character.toUpperCase(c), KeyEvent.KEYCODE_A + (c - 'a'), SHIFT);
        }
        String shiftedDigits = ")!@#$%^&*(";
        for (char c = '0'; c <= '9'; c++) {
            key(c, KeyEvent.KEYCODE_0 + (c - '0'), 0);
            key(shiftedDigits.charAt(c - '0'), KeyEvent.KEYCODE_0 + (c - '0'), SHIFT);
        }
        pair(KeyEvent.KEYCODE_GRAVE, '`', '~');
        pair(KeyEvent.KEYCODE_MINUS, '-', '_');
        pair(KeyEvent.KEYCODE_EQUALS, '=', '+');
        pair(KeyEvent.KEYCODE_LEFT_BRACKET, '[', '{');
        pair(KeyEvent.KEYCODE_RIGHT_BRACKET, ']', '}');
        pair(KeyEvent.KEYCODE_BACKSLASH, '\\', '|');
        pair(KeyEvent.KEYCODE_SEMICOLON, ';', ':');
        pair(KeyEvent.KEYCODE_APOSTROPHE, '\'', '"');
        pair(KeyEvent.KEYCODE_COMMA, ',', '<');
        pair(KeyEvent.KEYCODE_PERIOD, '.', '>');
        pair(KeyEvent.KEYCODE_SLASH, '/', '?');
        key(' ', KeyEvent.KEYCODE_SPACE, 0);
        key('\t', KeyEvent.KEYCODE_TAB, 0);
        key('\n', KeyEvent.KEYCODE_ENTER, 0);
        key('\u0301', KeyEvent.KEYCODE_E, RALT);
        key('\u0300', KeyEvent.KEYCODE_GRAVE, RALT);
        key('\u0302', KeyEvent.KEYCODE_I, RALT);
        key('\u0303', KeyEvent.KEYCODE_N, RALT);
        key('\u0308', KeyEvent.KEYCODE_U, RALT);
    }

    private static void pair(int code, char base, char shifted) {
        key(base, code, 0);
        key(shifted, code, SHIFT);
    }

    private static void key(char c, int code, int meta) {
        EVENTS.put(c, new int[] {code, meta});
        int ch = c >= '\u0300' && c <= '\u036f' ? (COMBINING_ACCENT | c) : c;
        CHARS.put(code + ":" + reduce(meta), ch);
    }

    private static int reduce(int meta) {
        if ((meta & KeyEvent.META_SHIFT_ON) != 0) return SHIFT;
        if ((meta & KeyEvent.META_ALT_RIGHT_ON) != 0) return RALT;
        return 0;
    }

    private final int deviceId;

    private KeyCharacterMap(int deviceId) {
        this.deviceId = deviceId;
    }

    public static KeyCharacterMap load(int deviceId) {
        return new KeyCharacterMap(deviceId);
    }

    public int getKeyboardType() {
        return FULL;
    }

    /** The character {@code keyCode} types with {@code metaState}; 0 if none. */
    public int get(int keyCode, int metaState) {
        Integer c = CHARS.get(keyCode + ":" + reduce(metaState));
        return c == null ? 0 : c;
    }

    /** Events typing {@code chars}, or null if one of them is not on this map. */
    public KeyEvent[] getEvents(char[] chars) {
        if (chars == null) throw new IllegalArgumentException("chars must not be null.");
        java.util.List<KeyEvent> events = new java.util.ArrayList<KeyEvent>();
        long now = android.os.SystemClock.uptimeMillis();
        for (char c : chars) {
            int[] k = EVENTS.get(c);
            if (k == null) return null;
            int code = k[0];
            int meta = k[1];
            int modifier = meta == SHIFT ? KeyEvent.KEYCODE_SHIFT_LEFT : meta == RALT ? KeyEvent.KEYCODE_ALT_RIGHT : 0;
            if (modifier != 0) events.add(event(now, KeyEvent.ACTION_DOWN, modifier, meta));
            events.add(event(now, KeyEvent.ACTION_DOWN, code, meta));
            events.add(event(now, KeyEvent.ACTION_UP, code, meta));
            if (modifier != 0) events.add(event(now, KeyEvent.ACTION_UP, modifier, 0));
        }
        return events.toArray(new KeyEvent[0]);
    }

    private KeyEvent event(long now, int action, int code, int meta) {
        return new KeyEvent(now, now, action, code, 0, meta, deviceId, 0, 0, InputDevice.SOURCE_KEYBOARD);
    }

    /** The character {@code accent} (a combining mark) composes with {@code c}; 0 if none. */
    public static int getDeadChar(int accent, int c) {
        String composed = Normalizer.normalize(new String(Character.toChars(c)) + (char) accent, Normalizer.Form.NFC);
        return composed.codePointCount(0, composed.length()) == 1 ? composed.codePointAt(0) : 0;
    }
}
