/**
 * normalize-5000: `normalizeSnapshot` on a 5,000-node dump made of real corpus nodes, against a bare
 * fast-xml-parser parse of the same string (`new XMLParser({ignoreAttributes:false,
 * attributeNamePrefix:''}).parse(xml)`), interleaved in the same run after warm-up; value = median
 * ms per normalize, ratio = median normalize / median parse.
 * normalize-5000-heap: extra heap right after one normalize (no GC in between, result alive) as a
 * multiple of the XML's UTF-8 size — an upper bound of the peak when no GC ran during the call.
 * normalize-corpus: all 20 corpus dumps per iteration, same method.
 * snapshot-answer-bytes: the snapshot route's answer for the simulator's built-in screen (normalized
 * JSON view, ~70 KB) written as bytes by `snapshotAnswerBytes`, against `Buffer.from(JSON.stringify(
 * view))` (what c.json + the response's byte count and UTF-8 write cost), interleaved, 20 calls per
 * sample; value = median ms per answer. snapshot-answer-bytes-5000: the same for the 5,000-node dump.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { XMLParser } from 'fast-xml-parser';
import type { SnapshotView } from '../../src/app/helper-views.ts';
import { builtinScreenXml } from '../../src/simulator/helper/index.ts';
import { snapshotAnswerBytes } from '../../src/snapshot/json-writer.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';
import { buildLargeDump, readCorpus } from '../fixtures/instrumentation/large-dump.ts';
import type { BenchFigure } from './run.ts';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);

/** Interleaved A/B timing: returns medians in ms. */
function compare(a: () => unknown, b: () => unknown, warmup: number, runs: number): { a: number; b: number } {
  for (let i = 0; i < warmup; i++) {
    a();
    b();
  }
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    a();
    ta.push(performance.now() - t);
    t = performance.now();
    b();
    tb.push(performance.now() - t);
  }
  return { a: median(ta), b: median(tb) };
}

function gcFunction(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const round = (n: number, digits = 3) => Number(n.toFixed(digits));

/** A normalized-JSON snapshot view as the route answers it. */
function jsonView(xml: string): SnapshotView {
  return {
    transport: 'session',
    elapsedMs: 12,
    deadlineMs: 30000,
    attempts: [{ transport: 'session', outcome: 'ok', ms: 12 }],
    helperElapsedMs: 40,
    waitForIdleTimeoutMs: 500,
    nodeCount: 124,
    truncated: false,
    windowCount: 1,
    captureMode: 'interactive-windows',
    format: 'json',
    snapshot: normalizeSnapshot(xml),
  };
}

/** The answer's bytes against JSON.stringify + UTF-8 encoding: ms per answer (20 per sample). */
function answerFigures(name: string, xml: string, runs: number): BenchFigure[] {
  const view = jsonView(xml);
  const expected = Buffer.from(JSON.stringify(view));
  if (!snapshotAnswerBytes(view).equals(expected)) throw new Error('snapshot answer bytes differ');
  const times = 20;
  const r = compare(
    () => {
      for (let i = 0; i < times; i++) snapshotAnswerBytes(view);
    },
    () => {
      for (let i = 0; i < times; i++) Buffer.from(JSON.stringify(view));
    },
    5,
    runs,
  );
  return [
    {
      bench: name,
      value: round(r.a / times, 4),
      unit: `ms (${expected.length} B answer)`,
      baseline: 'json-stringify-buffer-from',
      ratio: round(r.a / r.b),
    },
  ];
}

export async function bench(): Promise<BenchFigure[]> {
  const xml = buildLargeDump(5000);
  const bytes = Buffer.byteLength(xml);
  const big = compare(
    () => normalizeSnapshot(xml),
    () => parse(xml),
    10,
    31,
  );
  const gc = gcFunction();
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = normalizeSnapshot(xml);
  const after = process.memoryUsage().heapUsed;
  void kept.nodeCount;
  const corpus = readCorpus().map((c) => c.xml);
  const all = compare(
    () => {
      for (const x of corpus) normalizeSnapshot(x);
    },
    () => {
      for (const x of corpus) parse(x);
    },
    10,
    31,
  );
  const answers = [
    ...answerFigures('snapshot-answer-bytes', builtinScreenXml(), 31),
    ...answerFigures('snapshot-answer-bytes-5000', xml, 11),
  ];
  return [
    ...answers,
    { bench: 'fast-xml-parser-parse', value: round(big.b), unit: 'ms', baseline: null, ratio: null },
    {
      bench: 'normalize-5000',
      value: round(big.a),
      unit: 'ms',
      baseline: 'fast-xml-parser-parse',
      ratio: round(big.a / big.b),
    },
    {
      bench: 'normalize-5000-heap',
      value: round((after - before) / bytes),
      unit: `x-xml-size (${bytes} B)`,
      baseline: null,
      ratio: null,
    },
    {
      bench: 'normalize-corpus',
      value: round(all.a),
      unit: 'ms',
      baseline: 'fast-xml-parser-parse-corpus',
      ratio: round(all.a / all.b),
    },
  ];
}
