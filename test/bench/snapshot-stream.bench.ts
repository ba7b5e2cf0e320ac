/**
 * snapshot-stream-20000-heap: the bridge's peak live memory growth (heapUsed + external after a full
 * GC, taken synchronously each time the answer writer hands out a piece: `servedWithPeak`'s `live`
 * mode) while it serves a 20,000-node snapshot as normalized JSON over the session transport, as a
 * multiple of the XML size. The simulator runs in its own process (`simulate --nodes 20000`),
 * reached through the bridge's real adb server; the bridge is this process (`app.request`, the body
 * read as the response streams it and not kept). Median of 4 after a warm-up. Baseline: the same
 * request answered as one Buffer (streaming switched off), interleaved in the same run. Also
 * printed: the same for `format: xml`. The unit also gives both figures sampled the old way (every
 * millisecond and at each body piece, garbage included): that sampling cannot see inside the
 * one-Buffer answer's synchronous build and depends on when V8 collects.
 */
import path from 'node:path';
import { type SnapshotAnswerOptions, STREAM_SNAPSHOT_CHARS } from '../../src/snapshot/json-writer.ts';
import { tempDir, testDeviceBridge } from '../support/bridge.ts';
import { startSimulatorProcess } from '../support/fleet.ts';
import { servedWithPeak } from '../support/served-memory.ts';
import type { BenchFigure } from './run.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export async function bench(): Promise<BenchFigure[]> {
  const simulator = await startSimulatorProcess(1, ['--nodes', '20000', '--seed', '7']);
  const tmp = await tempDir();
  const file = path.join(tmp.dir, 'devices.json');
  await simulator.writeDevicesFile(file);
  const bridge = await testDeviceBridge({ simulate: 0, env: { DEVICEBRIDGE_DEVICES_FILE: file } });
  try {
    const post = (p: string, body: unknown) =>
      bridge.app.request(p, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    let leaseId: string | undefined;
    for (let i = 0; i < 120 && leaseId === undefined; i++) {
      const res = await post('/v1/leases', { ttlSeconds: 600 });
      if (res.status === 201) leaseId = ((await res.json()) as { id: string }).id;
      else await new Promise((r) => setTimeout(r, 250));
    }
    if (leaseId === undefined) throw new Error('no lease on the simulated device');
    const ensured = await post(`/v1/leases/${leaseId}/helpers/android-snapshot-helper/ensure`, {});
    if (ensured.status !== 200) throw new Error(`ensure: ${ensured.status}`);
    const capture = { transport: 'session', maxNodes: 20000, waitForIdleTimeoutMs: 0, timeoutMs: 60_000 };
    const xmlRes = await post(`/v1/leases/${leaseId}/snapshot`, { ...capture, format: 'xml' });
    const xmlBytes = Buffer.byteLength(((await xmlRes.json()) as { xml: string }).xml);
    const figures: BenchFigure[] = [];
    for (const format of ['json', 'xml'] as const) {
      // Interleaved: streamed, then the one-Buffer answer (streaming off), each by its live peak and
      // then by the old sampling; 4 rounds after a warm-up.
      const peaks = { streamed: [] as number[], oneBuffer: [] as number[] };
      const timerOnly = { streamed: [] as number[], oneBuffer: [] as number[] };
      for (let round = 0; round < 5; round++) {
        for (const threshold of [STREAM_SNAPSHOT_CHARS, Number.POSITIVE_INFINITY]) {
          for (const probed of [true, false]) {
            // How this bridge's snapshot route writes its answer (servedWithPeak sets the probe).
            const writer: SnapshotAnswerOptions = { thresholdChars: threshold, probe: null };
            bridge.services.snapshotAnswer = writer;
            const served = await servedWithPeak(
              bridge.app,
              `/v1/leases/${leaseId}/snapshot`,
              { ...capture, format },
              false,
              probed ? writer : null,
            );
            if (served.status !== 200) throw new Error(`snapshot: ${served.status}`);
            if (round === 0) continue;
            const into = probed ? peaks : timerOnly;
            (threshold === STREAM_SNAPSHOT_CHARS ? into.streamed : into.oneBuffer).push(
              served.peak / xmlBytes,
            );
          }
        }
      }
      delete bridge.services.snapshotAnswer;
      const value = median(peaks.streamed);
      const baseline = median(peaks.oneBuffer);
      const old = `sampled with garbage every ms and at body pieces: ${median(timerOnly.streamed).toFixed(2)}x vs ${median(timerOnly.oneBuffer).toFixed(2)}x`;
      figures.push({
        bench: format === 'json' ? 'snapshot-stream-20000-heap' : 'snapshot-stream-20000-heap-xml',
        value: Number(value.toFixed(2)),
        unit: `x-xml-size (peak live heapUsed+external growth while serving, after a GC at each piece the writer hands out; ${xmlBytes} B XML, session transport; one-Buffer answer: ${baseline.toFixed(2)}x; ${old})`,
        baseline: 'one-buffer-answer',
        ratio: Number((value / baseline).toFixed(2)),
      });
    }
    return figures;
  } finally {
    await bridge.cleanup();
    await simulator.stop();
    await tmp.cleanup();
  }
}
