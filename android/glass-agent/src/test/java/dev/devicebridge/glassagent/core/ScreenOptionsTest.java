package dev.devicebridge.glassagent.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Random;
import org.junit.Test;

public class ScreenOptionsTest {
    private static ScreenOptions parse(String... args) {
        return ScreenOptions.parse(args);
    }

    private static String refused(String... args) {
        try {
            ScreenOptions o = ScreenOptions.parse(args);
            fail("accepted " + o);
            return null;
        } catch (ScreenOptions.Invalid e) {
            return e.getMessage();
        }
    }

    @Test
    public void readsEveryOption() {
        ScreenOptions o = parse("--socket", "db-screen.1", "--max-size", "1024", "--bit-rate", "8000000", "--max-fps", "59.94");
        assertEquals("db-screen.1", o.socket);
        assertEquals(1024, o.maxSize);
        assertEquals(8000000, o.bitRate);
        assertEquals(59.94f, o.maxFps, 0f);
    }

    @Test
    public void defaultsAreTheWebSocketDefaults() {
        ScreenOptions o = parse("--socket", "s");
        assertEquals(1280, o.maxSize);
        assertEquals(4000000, o.bitRate);
        assertEquals(30f, o.maxFps, 0f);
    }

    @Test
    public void maxSizeZeroMeansTheDisplaySize() {
        assertEquals(0, parse("--socket", "s", "--max-size", "0").maxSize);
    }

    @Test
    public void badInputIsNamed() {
        assertTrue(refused().contains("--socket NAME is required"));
        assertTrue(refused("--max-size", "800").contains("--socket NAME is required"));
        assertTrue(refused("--socket").contains("--socket needs a value"));
        assertTrue(refused("--socket", "a", "--socket", "b").contains("--socket is given twice"));
        assertTrue(refused("--socket", "a b").contains("--socket must be"));
        assertTrue(refused("--socket", "").contains("--socket must be"));
        assertTrue(refused("--socket", "@x").contains("\"@x\""));
        assertTrue(refused("--socket", "s", "--size", "3").contains("unknown argument \"--size\""));
        assertTrue(refused("--socket", "s", "--max-size", "-1").contains("--max-size must be a whole number"));
        assertTrue(refused("--socket", "s", "--max-size", "32").contains("--max-size must be 0 (the display's size) or 64 to 8192"));
        assertTrue(refused("--socket", "s", "--max-size", "9000").contains("--max-size must be from 0 to 8192"));
        assertTrue(refused("--socket", "s", "--max-size", "0800").contains("--max-size must be a whole number"));
        assertTrue(refused("--socket", "s", "--max-size", "1e3").contains("--max-size must be a whole number"));
        assertTrue(refused("--socket", "s", "--bit-rate", "99999").contains("--bit-rate must be from 100000 to 200000000"));
        assertTrue(refused("--socket", "s", "--bit-rate", "4M").contains("--bit-rate must be a whole number"));
        assertTrue(refused("--socket", "s", "--bit-rate", "99999999999").contains("--bit-rate must be"));
        assertTrue(refused("--socket", "s", "--max-fps", "0").contains("--max-fps must be a number from 1 to 240"));
        assertTrue(refused("--socket", "s", "--max-fps", "241").contains("--max-fps"));
        assertTrue(refused("--socket", "s", "--max-fps", "NaN").contains("--max-fps"));
        assertTrue(refused("--socket", "s", "--max-fps", "30.").contains("--max-fps"));
        assertTrue(refused("--socket", "s", "--max-fps", ".5").contains("--max-fps"));
        assertTrue(refused("--socket", "s", "--max-fps", "1e2").contains("--max-fps"));
    }

    @Test
    public void aValueIsQuotedWithControlCharactersEscapedAndCut() {
        String m = refused("--socket", "a\nb");
        assertTrue(m, m.contains("\"a\\u000ab\""));
        StringBuilder longName = new StringBuilder();
        for (int i = 0; i < 200; i++) longName.append('x');
        m = refused("--socket", longName.toString());
        assertTrue(m, m.contains("…\"") && m.length() < 200);
    }

    /** Random argument lists (a seeded property run): either parsed within the limits, or refused by Invalid alone. */
    @Test
    public void anyArgumentsAreParsedWithinLimitsOrRefusedByName() {
        String[] names = {"--socket", "--max-size", "--bit-rate", "--max-fps", "--x", "-m", ""};
        String[] values = {"s", "0", "64", "8192", "8193", "1280", "100000", "4000000", "200000001", "1", "240", "30.5", "0.5", "-3",
            "", " ", "a b", "\u00e9", "007", "2147483648", "99999999999999", "1.2.3", "Infinity", "x\u0000"};
        Random random = new Random(20261130L);
        for (int run = 0; run < 20000; run++) {
            int n = random.nextInt(9);
            String[] args = new String[n];
            for (int i = 0; i < n; i++) {
                args[i] = random.nextInt(2) == 0 ? names[random.nextInt(names.length)] : values[random.nextInt(values.length)];
            }
            try {
                ScreenOptions o = ScreenOptions.parse(args);
                assertTrue(o.socket.matches("[A-Za-z0-9._-]{1,100}"));
                assertTrue(o.maxSize == 0 || (o.maxSize >= 64 && o.maxSize <= 8192));
                assertTrue(o.bitRate >= 100000 && o.bitRate <= 200000000);
                assertTrue(o.maxFps >= 1f && o.maxFps <= 240f);
            } catch (ScreenOptions.Invalid expected) {
                assertTrue(expected.getMessage(), expected.getMessage().contains("--") || expected.getMessage().contains("unknown argument"));
            }
        }
    }
}
