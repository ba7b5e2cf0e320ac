/**
 * instrumentation-parse: throughput of `parseInstrumentationOutput` + `interpretSnapshotResult`
 * (status records → chunk reassembly → UTF-8 XML) over realistic raw `am instrument -w` output:
 * a 15,000-node dump of real corpus nodes (mixed scripts) in the helper's 2 KiB chunks, ≈ 7.5 MB.
 * value = MB/s of raw output (median of 21 runs after warm-up).
 * Baseline `split-lines`: a bare `text.split('\n')` of the same output — the least any line parser
 * must do — interleaved in the same run; ratio = our time / split time (lower is better).
 * Also reported: `base64-decode` of the same payloads alone (the floor of reassembly), and
 * `instrumentation-decode-streamed`: what the one-shot transport runs — `SnapshotOutputDecoder` fed
 * the output as 64 KiB Buffers + `interpretStreamedSnapshot` (ratio: its time / the whole-text parse
 * of the same output, interleaved).
 */
import { SnapshotOutputDecoder } from '../../src/protocol/helper/chunk-stream.ts';
import { interpretSnapshotResult, interpretStreamedSnapshot } from '../../src/protocol/helper/chunks.ts';
import { parseInstrumentationOutput } from '../../src/protocol/helper/instrumentation-output.ts';
import { snapshotOutput } from '../fixtures/instrumentation/build.ts';
import { buildLargeDump } from '../fixtures/instrumentation/large-dump.ts';
import type { BenchFigure } from './run.ts';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] as number;
}

function time(fn: () => unknown): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

export async function bench(): Promise<BenchFigure[]> {
  const xml = buildLargeDump(15000);
  const text = snapshotOutput(xml);
  const megabytes = Buffer.byteLength(text) / 1e6;
  const run = () => {
    const result = interpretSnapshotResult(parseInstrumentationOutput(text));
    if (!result.ok || result.mode !== 'snapshot' || result.xml.length !== xml.length)
      throw new Error('bad parse');
    return result;
  };
  const payloads = parseInstrumentationOutput(text).statuses.map((s) => s.fields['payloadBase64'] as string);
  const decode = () => {
    for (const p of payloads) Buffer.from(p, 'base64');
  };
  const split = () => text.split('\n');
  const raw = Buffer.from(text);
  const pieces: Buffer[] = [];
  for (let at = 0; at < raw.length; at += 65536) pieces.push(Buffer.from(raw.subarray(at, at + 65536)));
  const streamed = () => {
    const decoder = new SnapshotOutputDecoder();
    for (const piece of pieces) decoder.push(piece);
    const result = interpretStreamedSnapshot(decoder.end());
    if (!result.ok || result.mode !== 'snapshot' || result.xml.length !== xml.length)
      throw new Error('bad streamed parse');
  };
  for (let i = 0; i < 8; i++) {
    run();
    split();
    decode();
    streamed();
  }
  const ours: number[] = [];
  const base: number[] = [];
  const b64: number[] = [];
  const stream: number[] = [];
  for (let i = 0; i < 21; i++) {
    ours.push(time(run));
    base.push(time(split));
    b64.push(time(decode));
    stream.push(time(streamed));
  }
  const mbps = (ms: number) => Number((megabytes / (ms / 1000)).toFixed(1));
  return [
    { bench: 'split-lines', value: mbps(median(base)), unit: 'MB/s', baseline: null, ratio: null },
    { bench: 'base64-decode', value: mbps(median(b64)), unit: 'MB/s', baseline: null, ratio: null },
    {
      bench: 'instrumentation-parse',
      value: mbps(median(ours)),
      unit: `MB/s (${megabytes.toFixed(1)} MB output)`,
      baseline: 'split-lines',
      ratio: Number((median(ours) / median(base)).toFixed(3)),
    },
    {
      bench: 'instrumentation-decode-streamed',
      value: mbps(median(stream)),
      unit: `MB/s (${megabytes.toFixed(1)} MB output in 64 KiB Buffers)`,
      baseline: 'instrumentation-parse',
      ratio: Number((median(stream) / median(ours)).toFixed(3)),
    },
  ];
}
