/**
 * snapshot-request-heap-*: extra memory of the bridge's whole one-shot snapshot path for 5,000-node
 * dumps — the raw `am instrument` output pushed in 64 KiB Buffers as the adb socket delivers it,
 * decoded (`SnapshotOutputDecoder`: chunk payloads base64-decoded from the bytes into one buffer),
 * interpreted, the XML normalized — as a multiple of the XML size. Measured as heapUsed +
 * arrayBuffers right after the call minus before (after forced GCs, the result kept alive); a GC
 * observer reports whether any collection ran during the call, in which case the figure is a lower
 * bound of the peak and the unit says so. With no GC during the call this counts everything the call
 * allocated, garbage included: an upper bound of its peak.
 *
 * Baseline, in the same run on the same pieces: the path before the streaming decode (the generic
 * parser keeping every status record, `interpretSnapshotResult`, normalize).
 *
 * snapshot-session-heap-*: the same for the session transport's path (the response's 64 KiB pieces
 * joined as session-client does, `parseSessionResponse`, normalize), against the one-shot path.
 *
 * snapshot-request-heap-total-*: the same with `external` instead of `arrayBuffers` (external ⊇
 * arrayBuffers): it also counts external strings — the XML string itself when V8 keeps it outside the
 * heap (> ~1 MB decoded by Node) and the UTF-16 scratch of the fast UTF-8 decode.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SnapshotOutputDecoder } from '../../src/protocol/helper/chunk-stream.ts';
import { interpretSnapshotResult, interpretStreamedSnapshot } from '../../src/protocol/helper/chunks.ts';
import { InstrumentationOutputParser } from '../../src/protocol/helper/instrumentation-output.ts';
import { parseSessionResponse } from '../../src/protocol/helper/session-frames.ts';
import { generateUiXml } from '../../src/simulator/helper/index.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';
import { snapshotOutput } from '../fixtures/instrumentation/build.ts';
import { buildLargeDump } from '../fixtures/instrumentation/large-dump.ts';
import type { BenchFigure } from './run.ts';

type Path = (pieces: Buffer[]) => { nodeCount: number };

const streamedPath: Path = (pieces) => {
  const decoder = new SnapshotOutputDecoder();
  for (const piece of pieces) decoder.push(piece);
  const result = interpretStreamedSnapshot(decoder.end(), { mode: 'snapshot' });
  if (!result.ok || result.mode !== 'snapshot') throw new Error('bench input did not parse');
  return normalizeSnapshot(result.xml);
};

const wholeTextPath: Path = (pieces) => {
  const parser = new InstrumentationOutputParser();
  for (const piece of pieces) parser.push(piece);
  const result = interpretSnapshotResult(parser.end(), { mode: 'snapshot' });
  if (!result.ok || result.mode !== 'snapshot') throw new Error('bench input did not parse');
  return normalizeSnapshot(result.xml);
};

/** The session transport's path: the socket's pieces joined (as session-client does), parsed, normalized. */
const sessionPath: Path = (pieces) => {
  const result = parseSessionResponse(Buffer.concat(pieces), { requestId: 'r1', command: 'snapshot' });
  if (!result.ok || result.command !== 'snapshot') throw new Error('bench session input did not parse');
  return normalizeSnapshot(result.xml);
};

/** A session `snapshot` response for `xml` (header block as the helper writes it, then the body). */
function sessionResponse(xml: string): Buffer {
  const body = Buffer.from(xml);
  const header =
    `agentDeviceProtocol=android-snapshot-helper-v1\nbyteLength=${body.length}\nhelperApiVersion=2\nok=true\n` +
    'outputFormat=uiautomator-xml\nrequestId=r1\n\n';
  return Buffer.concat([Buffer.from(header), body]);
}

function inPieces(raw: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < raw.length; at += 65536) pieces.push(Buffer.from(raw.subarray(at, at + 65536)));
  return pieces;
}

interface Measured {
  heap: number;
  total: number;
  collections: number;
}

async function measure(path: Path, pieces: Buffer[], xmlBytes: number, gc: () => void): Promise<Measured> {
  for (let i = 0; i < 3; i++) path(pieces);
  let collections = 0;
  const observer = new PerformanceObserver((list) => {
    collections += list.getEntries().length;
  });
  gc();
  gc();
  await new Promise((r) => setImmediate(r));
  observer.observe({ entryTypes: ['gc'] });
  const m0 = process.memoryUsage();
  const kept = path(pieces);
  const m1 = process.memoryUsage();
  await new Promise((r) => setImmediate(r));
  observer.disconnect();
  void kept.nodeCount;
  return {
    heap: (m1.heapUsed - m0.heapUsed + m1.arrayBuffers - m0.arrayBuffers) / xmlBytes,
    total: (m1.heapUsed - m0.heapUsed + m1.external - m0.external) / xmlBytes,
    collections,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export async function bench(): Promise<BenchFigure[]> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const figures: BenchFigure[] = [];
  for (const [name, xml] of [
    ['generated', generateUiXml(5000, 1)],
    ['corpus', buildLargeDump(5000)],
  ] as const) {
    const raw = Buffer.from(snapshotOutput(xml));
    const pieces = inPieces(raw);
    const sessionPieces = inPieces(sessionResponse(xml));
    const xmlBytes = Buffer.byteLength(xml);
    const runs: Record<'streamed' | 'whole' | 'session', Measured[]> = {
      streamed: [],
      whole: [],
      session: [],
    };
    // Interleaved, 5 rounds; medians.
    for (let round = 0; round < 5; round++) {
      runs.streamed.push(await measure(streamedPath, pieces, xmlBytes, gc));
      runs.whole.push(await measure(wholeTextPath, pieces, xmlBytes, gc));
      runs.session.push(await measure(sessionPath, sessionPieces, xmlBytes, gc));
    }
    const gcs = runs.streamed.reduce((n, m) => n + m.collections, 0);
    const note = `${xmlBytes} B XML, ${raw.length} B output in 64 KiB pieces${gcs > 0 ? `; GC ran in ${gcs} of 5 calls: lower bound` : ''}`;
    for (const kind of ['heap', 'total'] as const) {
      const value = median(runs.streamed.map((m) => m[kind]));
      const baseline = median(runs.whole.map((m) => m[kind]));
      figures.push({
        bench: kind === 'heap' ? `snapshot-request-heap-${name}` : `snapshot-request-heap-total-${name}`,
        value: Number(value.toFixed(3)),
        unit: `x-xml-size (${kind === 'heap' ? 'heapUsed+arrayBuffers' : 'heapUsed+external'}; ${note}; whole-text path ${baseline.toFixed(2)}x)`,
        baseline: 'whole-text-path',
        ratio: Number((value / baseline).toFixed(3)),
      });
    }
    // The session transport (no chunks: the body is the XML's bytes), against the one-shot path.
    for (const kind of ['heap', 'total'] as const) {
      const value = median(runs.session.map((m) => m[kind]));
      const baseline = median(runs.streamed.map((m) => m[kind]));
      const sessionGcs = runs.session.reduce((n, m) => n + m.collections, 0);
      figures.push({
        bench: `snapshot-session-heap${kind === 'heap' ? '' : '-total'}-${name}`,
        value: Number(value.toFixed(3)),
        unit: `x-xml-size (${kind === 'heap' ? 'heapUsed+arrayBuffers' : 'heapUsed+external'}; session response in 64 KiB pieces, joined, parsed, normalized${sessionGcs > 0 ? `; GC ran in ${sessionGcs} of 5 calls: lower bound` : ''}; one-shot path ${baseline.toFixed(2)}x)`,
        baseline: 'one-shot-streamed-path',
        ratio: Number((value / baseline).toFixed(3)),
      });
    }
  }
  return figures;
}
