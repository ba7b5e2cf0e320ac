package dev.devicebridge.glassagent.core;

import java.text.Normalizer;

/**
 * Accented letters as a dead key followed by the letter: "é" → "\u0301e". Android's virtual
 * keyboard map (Virtual.kcm) has no key for "é", so KeyCharacterMap.getEvents returns null for it,
 * but it has the diacritical dead keys (grave, acute, circumflex, tilde, umlaut on right-alt), and
 * a text field composes a dead key with the next letter. The same idea as scrcpy's KeyComposition,
 * derived here from Unicode's canonical decomposition instead of a table.
 */
public final class KeyComposition {
    /** The combining marks the virtual keyboard has dead keys for. */
    private static final String DEAD_KEYS = "\u0300\u0301\u0302\u0303\u0308";

    private KeyComposition() {}

    /**
     * The dead key then the base letter for {@code c}, or null when {@code c} is not an ASCII
     * letter with exactly one of those accents.
     */
    public static String decompose(char c) {
        if (c < 0x80) return null;
        String d = Normalizer.normalize(String.valueOf(c), Normalizer.Form.NFD);
        if (d.length() != 2) return null;
        char base = d.charAt(0);
        char accent = d.charAt(1);
        boolean letter = (base >= 'a' && base <= 'z') || (base >= 'A' && base <= 'Z');
        if (!letter || DEAD_KEYS.indexOf(accent) < 0) return null;
        return new String(new char[] {accent, base});
    }
}
