package dev.devicebridge.snapshothelper.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.devicebridge.json.Fixtures;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.Test;

public class SessionTest {
    @Test
    public void splitsLikeTrimSplitThree() {
        SessionCommand c = SessionCommand.parse("  gesture\t r-1   abc def \r");
        assertEquals("gesture", c.action);
        assertEquals("r-1", c.requestId);
        assertEquals("abc def", c.payload);
        SessionCommand bare = SessionCommand.parse("quit");
        assertEquals("quit", bare.action);
        assertEquals("", bare.requestId);
        assertEquals("", SessionCommand.parse("   ").action);
    }

    @Test
    public void responseIsSortedHeadersBlankLineBody() {
        Fields headers = new Fields().put("ok", "true").put("b", "two\r\nlines").put("a", "1");
        byte[] body = "<x>\u00e9</x>".getBytes(StandardCharsets.UTF_8);
        String text = new String(new SessionResponse(headers, body, false).toBytes(), StandardCharsets.UTF_8);
        assertEquals("a=1\nb=two  lines\nok=true\n\n<x>\u00e9</x>", text);
        assertEquals("ok=true\n\n", new String(new SessionResponse(new Fields().put("ok", "true"), null, true).toBytes(),
                StandardCharsets.UTF_8));
    }

    /** test/fixtures/contract/snapshot-helper/session-commands.json: the simulator splits the same lines alike. */
    @Test
    public void splitsTheSharedLinesAsTheSimulatorDoes() throws Exception {
        List<JSONObject> cases = Fixtures.objects(Fixtures.json("contract/snapshot-helper/session-commands.json"), "cases");
        assertTrue(cases.size() > 10);
        for (JSONObject c : cases) {
            String line = c.getString("line");
            JSONArray parts = c.getJSONArray("parts");
            SessionCommand command = SessionCommand.parse(line);
            assertEquals(line, parts.getString(0), command.action);
            assertEquals(line, parts.getString(1), command.requestId);
            assertEquals(line, parts.getString(2), command.payload);
        }
    }
}
