package dev.devicebridge.glass.common;

import static org.junit.Assert.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

public class LineServerTest {
    @Test
    public void sendsTheBannerThenOneReplyPerLineInUtf8SkippingBlankLines() throws Exception {
        byte[] input = ("one\n\n  \nd\u00e9j\u00e0 \ud83d\ude00\r\nlast-without-newline").getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        final List<String> seen = new ArrayList<String>();
        LineServer.serve(new ByteArrayInputStream(input), out, "BANNER", new LineServer.Handler() {
            @Override
            public String handle(String line) {
                seen.add(line);
                return "<" + line + ">";
            }
        });
        assertEquals("BANNER\n<one>\n<d\u00e9j\u00e0 \ud83d\ude00>\n<last-without-newline>\n",
                new String(out.toByteArray(), StandardCharsets.UTF_8));
        assertEquals(3, seen.size());
    }
}
