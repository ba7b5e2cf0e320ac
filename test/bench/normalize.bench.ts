/**
 * normalize-5000: `normalizeSnapshot` on a 5,000-node dump made of real corpus nodes, against a bare
 * fast-xml-parser parse of the same string (`new XMLParser({ignoreAttributes:false,
 * attributeNamePrefix:''}).parse(xml)`), interleaved in the same run after warm-up; value = median
 * ms per normalize, ratio = median normalize / median parse.
 * normalize-5000-heap: extra heap right after one normalize (no GC in between, result alive) as a
 * multiple of the XML's UTF-8 size — an upper bound of the peak when no GC ran during the call.
 * normalize-corpus: all 20 corpus dumps per iteration, same method.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { XMLParser } from 'fast-xml-parser';
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
  return [
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
