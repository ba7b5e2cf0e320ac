package dev.devicebridge.glassagent.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import org.junit.Test;

public class KeyCompositionTest {
    @Test
    public void accentedLettersBecomeTheDeadKeyThenTheLetter() {
        assertEquals("\u0301e", KeyComposition.decompose('\u00e9'));
        assertEquals("\u0300A", KeyComposition.decompose('\u00c0'));
        assertEquals("\u0302i", KeyComposition.decompose('\u00ee'));
        assertEquals("\u0303n", KeyComposition.decompose('\u00f1'));
        assertEquals("\u0308U", KeyComposition.decompose('\u00dc'));
        assertEquals("\u0308y", KeyComposition.decompose('\u00ff'));
    }

    @Test
    public void anythingElseHasNoComposition() {
        for (char c : new char[] {'e', ' ', '\u00e7', '\u00e5', '\u65e5', '\u00df', '\u0301', '\ud83d', '\u1ec7'}) {
            assertNull(Integer.toHexString(c), KeyComposition.decompose(c));
        }
    }
}
