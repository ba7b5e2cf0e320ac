package dev.devicebridge.snapshothelper.core;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits the XML bytes into status records: {@link Protocol#CHUNK_BYTES} raw bytes each, base64
 * (standard alphabet, padded, no line breaks) in {@code payloadBase64}, with {@code chunkIndex} and
 * {@code chunkCount}. An empty document is still one (empty) chunk.
 */
public final class Chunks {
    private Chunks() {}

    public static int count(int byteLength) {
        return Math.max(1, (byteLength + Protocol.CHUNK_BYTES - 1) / Protocol.CHUNK_BYTES);
    }

    public static List<Fields> records(byte[] bytes) {
        int chunkCount = count(bytes.length);
        List<Fields> records = new ArrayList<Fields>(chunkCount);
        for (int index = 0; index < chunkCount; index++) {
            int from = Math.min(bytes.length, index * Protocol.CHUNK_BYTES);
            int to = Math.min(bytes.length, from + Protocol.CHUNK_BYTES);
            records.add(Protocol.protocolFields()
                    .put("chunkIndex", index)
                    .put("chunkCount", chunkCount)
                    .put("payloadBase64", Base64Codec.encode(bytes, from, to - from)));
        }
        return records;
    }
}
