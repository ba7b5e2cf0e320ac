package dev.devicebridge.glassagent.core;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A key chord: "+"-joined, case-insensitive, modifiers first, one key last ("ctrl+a", "shift+tab",
 * "enter", "f5", "ctrl+shift+z"). Key codes and meta flags are Android's KeyEvent constants.
 */
public final class Chord {
    public static final int META_SHIFT_ON = 0x1;
    public static final int META_ALT_ON = 0x2;
    public static final int META_CTRL_ON = 0x1000;
    public static final int META_META_ON = 0x10000;

    private static final Map<String, Integer> MODIFIERS = new HashMap<String, Integer>();
    /** Modifier name → the key code pressed for it (left variants). */
    private static final Map<String, Integer> MODIFIER_KEYS = new HashMap<String, Integer>();
    private static final Map<String, Integer> KEYS = new HashMap<String, Integer>();

    static {
        MODIFIERS.put("shift", META_SHIFT_ON);
        MODIFIERS.put("alt", META_ALT_ON);
        MODIFIERS.put("ctrl", META_CTRL_ON);
        MODIFIERS.put("control", META_CTRL_ON);
        MODIFIERS.put("meta", META_META_ON);
        MODIFIERS.put("cmd", META_META_ON);
        MODIFIERS.put("super", META_META_ON);
        MODIFIER_KEYS.put("shift", 59);
        MODIFIER_KEYS.put("alt", 57);
        MODIFIER_KEYS.put("ctrl", 113);
        MODIFIER_KEYS.put("control", 113);
        MODIFIER_KEYS.put("meta", 117);
        MODIFIER_KEYS.put("cmd", 117);
        MODIFIER_KEYS.put("super", 117);
        for (char c = 'a'; c <= 'z'; c++) KEYS.put(String.valueOf(c), 29 + (c - 'a'));
        for (char c = '0'; c <= '9'; c++) KEYS.put(String.valueOf(c), 7 + (c - '0'));
        for (int f = 1; f <= 12; f++) KEYS.put("f" + f, 131 + f - 1);
        KEYS.put("enter", 66);
        KEYS.put("return", 66);
        KEYS.put("tab", 61);
        KEYS.put("space", 62);
        KEYS.put("backspace", 67);
        KEYS.put("delete", 112);
        KEYS.put("del", 112);
        KEYS.put("escape", 111);
        KEYS.put("esc", 111);
        KEYS.put("up", 19);
        KEYS.put("down", 20);
        KEYS.put("left", 21);
        KEYS.put("right", 22);
        KEYS.put("home", 122);
        KEYS.put("end", 123);
        KEYS.put("pageup", 92);
        KEYS.put("pagedown", 93);
        KEYS.put("insert", 124);
        KEYS.put("back", 4);
        KEYS.put("menu", 82);
        KEYS.put("search", 84);
        KEYS.put("volumeup", 24);
        KEYS.put("volumedown", 25);
        KEYS.put("power", 26);
        KEYS.put("comma", 55);
        KEYS.put("period", 56);
        KEYS.put("minus", 69);
        KEYS.put("equals", 70);
        KEYS.put("slash", 76);
        KEYS.put("semicolon", 74);
        KEYS.put("apostrophe", 75);
        KEYS.put("backslash", 73);
        KEYS.put("grave", 68);
        KEYS.put("leftbracket", 71);
        KEYS.put("rightbracket", 72);
    }

    /** The key's KeyEvent code. */
    public final int keyCode;
    /** Meta state (KeyEvent.META_* flags) of the modifiers. */
    public final int metaState;
    /** Key codes of the modifiers, in the order given (pressed in order, released in reverse). */
    public final int[] modifierKeyCodes;

    private Chord(int keyCode, int metaState, int[] modifierKeyCodes) {
        this.keyCode = keyCode;
        this.metaState = metaState;
        this.modifierKeyCodes = modifierKeyCodes;
    }

    /** @throws IllegalArgumentException naming the part that is not a known modifier or key */
    public static Chord parse(String chord) {
        if (chord == null || chord.trim().isEmpty()) throw new IllegalArgumentException("empty key chord");
        String[] parts = chord.trim().toLowerCase(Locale.ROOT).split("\\+", -1);
        int meta = 0;
        int[] modifierKeys = new int[parts.length - 1];
        for (int i = 0; i < parts.length - 1; i++) {
            String part = parts[i].trim();
            Integer flag = MODIFIERS.get(part);
            if (flag == null) throw new IllegalArgumentException("unknown modifier \"" + part + "\" in key chord \"" + chord + "\"");
            if ((meta & flag) != 0) throw new IllegalArgumentException("modifier \"" + part + "\" repeated in key chord \"" + chord + "\"");
            meta |= flag;
            modifierKeys[i] = MODIFIER_KEYS.get(part);
        }
        String key = parts[parts.length - 1].trim();
        Integer code = KEYS.get(key);
        if (code == null) throw new IllegalArgumentException("unknown key \"" + key + "\" in key chord \"" + chord + "\"");
        return new Chord(code, meta, modifierKeys);
    }
}
