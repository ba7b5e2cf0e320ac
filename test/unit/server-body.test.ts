import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { limitedStream } from '../../src/server/body.ts';

async function drain(stream: ReadableStream<Uint8Array>): Promise<{ bytes: number; error?: unknown }> {
  const reader = stream.getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes };
      bytes += value.byteLength;
    }
  } catch (error) {
    return { bytes, error };
  }
}

function chunked(sizes: number[], pulled: { n: number }): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i >= sizes.length) return controller.close();
      pulled.n += sizes[i]!;
      controller.enqueue(new Uint8Array(sizes[i++]!));
    },
  });
}

describe('limitedStream', () => {
  it('passes a body through unchanged iff it is within the limit, else fails with PAYLOAD_TOO_LARGE having pulled at most two chunks past it (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5000 }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 60_000 }),
        async (sizes, limit) => {
          const total = sizes.reduce((a, b) => a + b, 0);
          const pulled = { n: 0 };
          const { bytes, error } = await drain(limitedStream(chunked(sizes, pulled), limit));
          if (total <= limit) {
            expect(error).toBeUndefined();
            expect(bytes).toBe(total);
          } else {
            expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limitBytes: limit } });
            expect(bytes).toBeLessThanOrEqual(limit);
            // The chunk that crossed the limit, and at most one the source queued ahead of it.
            expect(pulled.n).toBeLessThanOrEqual(limit + 2 * 5000);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
