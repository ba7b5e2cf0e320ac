package dev.devicebridge.snapshothelper.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Random;
import org.junit.Test;

public class ChunksTest {
    @Test
    public void chunkCountFollowsTheByteLength() {
        assertEquals(1, Chunks.count(0));
        assertEquals(1, Chunks.count(2048));
        assertEquals(2, Chunks.count(2049));
        assertEquals(3, Chunks.count(6000));
    }

    @Test
    public void recordsReassembleToTheInputAndCarryTheProtocol() {
        Random random = new Random(42);
        for (int size : new int[] {0, 1, 2, 3, 2047, 2048, 2049, 10000}) {
            byte[] data = new byte[size];
            random.nextBytes(data);
            List<Fields> records = Chunks.records(data);
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            for (int i = 0; i < records.size(); i++) {
                Fields r = records.get(i);
                assertEquals(String.valueOf(i), r.get("chunkIndex"));
                assertEquals(String.valueOf(records.size()), r.get("chunkCount"));
                assertEquals("android-snapshot-helper-v1", r.get("agentDeviceProtocol"));
                assertEquals("uiautomator-xml", r.get("outputFormat"));
                byte[] part = java.util.Base64.getDecoder().decode(r.get("payloadBase64"));
                joined.write(part, 0, part.length);
            }
            assertArrayEquals(data, joined.toByteArray());
        }
    }

    @Test
    public void base64MatchesTheJdkAndDecodesStrictly() {
        Random random = new Random(7);
        for (int n = 0; n < 200; n++) {
            byte[] data = new byte[random.nextInt(64)];
            random.nextBytes(data);
            String encoded = Base64Codec.encode(data);
            assertEquals(java.util.Base64.getEncoder().encodeToString(data), encoded);
            assertArrayEquals(data, Base64Codec.decode(" " + encoded + "\n"));
        }
        for (String bad : new String[] {"abc", "ab=c", "a===", "ab!d", "YQ==YQ==", "-_8="}) {
            try {
                Base64Codec.decode(bad);
                fail("decoded " + bad);
            } catch (IllegalArgumentException e) {
                assertEquals("payloadBase64 is not valid base64", e.getMessage());
            }
        }
    }
}
