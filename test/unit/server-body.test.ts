import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { limitedStream, readIncoming } from '../../src/server/body.ts';

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

describe('readIncoming (a Node request body read without a web stream)', () => {
  it('resolves the exact bytes iff the body is within the limit, else PAYLOAD_TOO_LARGE with the stream paused (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 5000 }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 60_000 }),
        async (chunks, limit) => {
          const total = chunks.reduce((a, b) => a + b.byteLength, 0);
          const source = Readable.from(
            chunks.map((c) => Buffer.from(c)),
            { objectMode: false },
          );
          const result = await readIncoming(source, limit).then(
            (bytes) => ({ bytes }),
            (error: unknown) => ({ error }),
          );
          if (total <= limit) {
            expect(result).toEqual({ bytes: Buffer.concat(chunks.map((c) => Buffer.from(c))) });
          } else {
            expect(result).toMatchObject({
              error: { code: 'PAYLOAD_TOO_LARGE', details: { limitBytes: limit } },
            });
            // Reading stopped at the crossing chunk: nothing of ours listens any more and the rest stays
            // for the server's bounded drain.
            expect(source.isPaused()).toBe(true);
            expect(source.listenerCount('data')).toBe(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a body whose client went away rejects instead of hanging', async () => {
    const source = new Readable({ read() {} });
    source.push(Buffer.from('{"a"'));
    const pending = readIncoming(source, 1024);
    source.destroy();
    await expect(pending).rejects.toThrow(/closed the connection/);
    await expect(readIncoming(source, 1024)).rejects.toThrow(/closed the connection/);
  });
});
