package dev.devicebridge.json;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.Test;

public class StrictJsonTest {
    /** test/fixtures/strict-json/cases.json: the bridge's parser passes the same cases. */
    @Test
    public void parsesAndRefusesExactlyAsTheBridge() throws Exception {
        List<JSONObject> cases = Fixtures.objects(Fixtures.json("strict-json/cases.json"), "cases");
        assertTrue(cases.size() > 50);
        for (JSONObject c : cases) {
            String json = c.getString("json");
            if (c.has("error")) {
                try {
                    Object value = StrictJson.parse(json);
                    fail(json + ": accepted as " + value + ", expected " + c.getString("error"));
                } catch (StrictJson.Failure e) {
                    assertEquals(json, c.getString("error"), e.getMessage());
                    assertEquals(json, c.getString("rule"), e.rule);
                }
            } else {
                Object value = StrictJson.parse(json);
                assertTrue(json + ": read as " + value, Fixtures.same(c.get("value"), value));
            }
        }
    }

    @Test
    public void numbersAreTypedAsOrgJsonTypesThem() {
        JSONArray a = (JSONArray) StrictJson.parse("[7,-0,4294967296,9007199254740993,1.0,1e2]");
        assertEquals(Integer.valueOf(7), a.opt(0));
        assertEquals(Integer.valueOf(0), a.opt(1));
        assertEquals(Long.valueOf(4294967296L), a.opt(2));
        // Past 2^53 a JavaScript host rounds: so does this parser.
        assertEquals(Double.valueOf(9007199254740992.0), a.opt(3));
        assertEquals(Double.valueOf(1.0), a.opt(4));
        assertEquals(Double.valueOf(100.0), a.opt(5));
    }

    @Test
    public void numbersAreWrittenAsJavaScriptWritesThem() {
        double[] values = {0, -0.0, 1, -1, 1.5, 100, 1e20, 1e21, 1.5e21, 123456789012345680000.0, 0.1, 1e-6,
            1e-7, 1.25e-7, 9007199254740991.0, 9007199254740992.0, 1e300, -2.5e-300, 0.000001234, 4.9e-324};
        String[] expected = {"0", "0", "1", "-1", "1.5", "100", "100000000000000000000", "1e+21", "1.5e+21",
            "123456789012345680000", "0.1", "0.000001", "1e-7", "1.25e-7", "9007199254740991", "9007199254740992",
            "1e+300", "-2.5e-300", "0.000001234", "5e-324"};
        for (int i = 0; i < values.length; i++) assertEquals(expected[i], StrictJson.jsNumber(values[i]));
    }

    @Test
    public void aLineOfBracketsIsRefusedWithoutOverflowingTheStack() {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 200000; i++) s.append('[');
        try {
            StrictJson.parse(s.toString());
            fail("accepted");
        } catch (StrictJson.Failure e) {
            assertEquals("depth", e.rule);
        }
    }

    @Test
    public void sizeIsCountedInUtf8Bytes() {
        assertEquals(1 + 2 + 3 + 4 + 3, StrictJson.utf8Length("a\u00e9\u4e16\ud83d\ude00\ud800"));
        try {
            StrictJson.parse("\"\u4e16\u4e16\"", 64, 7);
            fail("accepted");
        } catch (StrictJson.Failure e) {
            assertEquals("size", e.rule);
            assertEquals("JSON: the document is 8 bytes, over the limit of 7 bytes", e.getMessage());
        }
        assertEquals("\u4e16\u4e16", StrictJson.parse("\"\u4e16\u4e16\"", 64, 8));
    }
}
