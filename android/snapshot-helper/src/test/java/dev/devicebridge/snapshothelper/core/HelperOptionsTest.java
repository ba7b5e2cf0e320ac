package dev.devicebridge.snapshothelper.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.fail;

import java.util.HashMap;
import java.util.Map;
import org.junit.Test;

public class HelperOptionsTest {
    private static Map<String, String> extras(String... kv) {
        Map<String, String> m = new HashMap<String, String>();
        for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
        return m;
    }

    @Test
    public void defaultsAreTheSeeds() {
        HelperOptions o = HelperOptions.parse(extras());
        assertEquals(500, o.waitForIdleTimeoutMs);
        assertEquals(100, o.waitForIdleQuietMs);
        assertEquals(8000, o.timeoutMs);
        assertEquals(128, o.maxDepth);
        assertEquals(5000, o.maxNodes);
    }

    @Test
    public void trimsBlankMeansDefaultNegativeMeansZero() {
        HelperOptions o = HelperOptions.parse(extras("waitForIdleTimeoutMs", " 0 ", "timeoutMs", "  ", "maxDepth", "-3", "maxNodes", "+12"));
        assertEquals(0, o.waitForIdleTimeoutMs);
        assertEquals(8000, o.timeoutMs);
        assertEquals(0, o.maxDepth);
        assertEquals(12, o.maxNodes);
        assertEquals(9000000000L, HelperOptions.parse(extras("timeoutMs", "9000000000")).timeoutMs);
    }

    @Test
    public void rejectsWhatIsNotADecimalIntegerOfTheKeysWidth() {
        String[][] bad = {{"maxDepth", "12abc"}, {"maxDepth", "2147483648"}, {"timeoutMs", "1.5"},
            {"maxNodes", "\u0661\u0662"}, {"timeoutMs", "99999999999999999999"}, {"maxDepth", "+"}};
        for (String[] kv : bad) {
            try {
                HelperOptions.parse(extras(kv[0], kv[1]));
                fail("accepted " + kv[0] + "=" + kv[1]);
            } catch (NumberFormatException e) {
                assertEquals("For input string: \"" + kv[1] + "\"", e.getMessage());
            }
        }
    }

    @Test
    public void metadataCarriesProtocolAndOptions() {
        Fields f = HelperOptions.parse(extras("maxDepth", "7")).metadata();
        assertEquals("android-snapshot-helper-v1", f.get("agentDeviceProtocol"));
        assertEquals("2", f.get("helperApiVersion"));
        assertEquals("uiautomator-xml", f.get("outputFormat"));
        assertEquals("7", f.get("maxDepth"));
        assertEquals(8, f.size());
        assertNull(HelperOptions.stringExtra(extras("mode", " \t"), "mode"));
    }
}
