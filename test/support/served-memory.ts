/**
 * Peak memory of this process while it serves one request through an app (`app.request`): heapUsed
 * + external (Buffers and external strings included) sampled every millisecond and at every body
 * piece read, minus the level after forced GCs before the request. The body is read piece by piece
 * and kept as one Buffer unless `keep` is false (a kept copy is part of the figure).
 *
 * Those samples count garbage not yet collected, so they depend on when V8 collects, and the timer
 * cannot run inside a synchronous build of the whole answer (a one-Buffer answer's peak is missed).
 * `live`: instead, the peak of what is alive where the answer writer hands out a piece (the `probe`
 * of the writer's options, src/snapshot/json-writer.ts, which this sets: called synchronously while
 * the working buffer and the piece are both alive): a full GC, then a sample, at each piece; no
 * timer or body samples. The same figure for a
 * one-Buffer and a streamed answer, whatever the GC timing. Used by the snapshot streaming test and
 * bench.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
export const gc = runInNewContext('gc') as () => void;

export interface Served {
  status: number;
  contentType: string | null;
  body: Buffer;
  bodyBytes: number;
  pieces: number;
  /** Peak (heapUsed + external) above the level before the request, in bytes. */
  peak: number;
}

const used = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

export async function servedWithPeak(
  app: { request(path: string, init: RequestInit): Response | Promise<Response> },
  path: string,
  body: unknown,
  /** Keep the body (default); false: only count its bytes (the figure then holds no copy). */
  keep = true,
  /** Count only what is alive at the answer writer's pieces (see above); null: timer and body samples. */
  live: { probe?: (() => void) | null } | null = null,
): Promise<Served> {
  gc();
  gc();
  const before = used();
  let peak = 0;
  const sample = () => {
    peak = Math.max(peak, used() - before);
  };
  const bodySample = live === null ? sample : () => {};
  const timer = live === null ? setInterval(sample, 1) : undefined;
  if (live !== null) {
    live.probe = () => {
      gc();
      sample();
    };
  }
  try {
    const res = await app.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    bodySample();
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const parts: Uint8Array[] = [];
    let pieces = 0;
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      bodySample();
      if (done) break;
      pieces++;
      bytes += value.length;
      if (keep) parts.push(value);
    }
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: keep ? Buffer.concat(parts) : Buffer.alloc(0),
      bodyBytes: bytes,
      pieces,
      peak,
    };
  } finally {
    clearInterval(timer);
    if (live !== null) live.probe = null;
  }
}
