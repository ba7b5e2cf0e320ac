/**
 * snapshot-request-heap-*: extra memory of the bridge's whole snapshot path for 5,000-node dumps — the
 * raw `am instrument` output parsed, chunks reassembled, XML normalized — as a multiple of the XML
 * size (target < 3×). Measured as heapUsed + arrayBuffers right after the call minus before (after forced GCs, the
 * result kept alive); a GC observer reports whether any collection ran during the call, in which
 * case the figure is a lower bound of the peak and the bench says so in its unit.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { interpretSnapshotResult } from '../../src/helpers/protocol/chunks.ts';
import { parseInstrumentationOutput } from '../../src/helpers/protocol/instrumentation-output.ts';
import { generateUiXml } from '../../src/simulator/helper/index.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';
import { snapshotOutput } from '../fixtures/instrumentation/build.ts';
import { buildLargeDump } from '../fixtures/instrumentation/large-dump.ts';
import type { BenchFigure } from './run.ts';

async function measure(
  xml: string,
  gc: () => void,
): Promise<{ ratio: number; collections: number; rawBytes: number }> {
  const raw = snapshotOutput(xml);
  const request = () => {
    const result = interpretSnapshotResult(parseInstrumentationOutput(raw), { mode: 'snapshot' });
    if (!result.ok || result.mode !== 'snapshot') throw new Error('bench input did not parse');
    return normalizeSnapshot(result.xml);
  };
  for (let i = 0; i < 3; i++) request();
  let collections = 0;
  const observer = new PerformanceObserver((list) => {
    collections += list.getEntries().length;
  });
  gc();
  gc();
  await new Promise((r) => setImmediate(r));
  observer.observe({ entryTypes: ['gc'] });
  // Heap plus Buffers (base64 decodes into ArrayBuffers outside the JS heap).
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const before = used();
  const kept = request();
  const after = used();
  await new Promise((r) => setImmediate(r));
  observer.disconnect();
  void kept.nodeCount;
  return { ratio: (after - before) / Buffer.byteLength(xml), collections, rawBytes: Buffer.byteLength(raw) };
}

export async function bench(): Promise<BenchFigure[]> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const figures: BenchFigure[] = [];
  for (const [name, xml] of [
    ['snapshot-request-heap-generated', generateUiXml(5000, 1)],
    ['snapshot-request-heap-corpus', buildLargeDump(5000)],
  ] as const) {
    const m = await measure(xml, gc);
    figures.push({
      bench: name,
      value: Number(m.ratio.toFixed(3)),
      unit: `x-xml-size (${Buffer.byteLength(xml)} B XML, ${m.rawBytes} B output${m.collections > 0 ? `; ${m.collections} GC during: lower bound` : ''})`,
      baseline: null,
      ratio: null,
    });
  }
  return figures;
}
