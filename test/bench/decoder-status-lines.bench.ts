/**
 * The snapshot output decoder's record lane on many '='-less status lines: 16× the lines should
 * cost ~16× the time (linear); the quadratic key search it once had was ~250×. A timing figure,
 * so it lives here and not in the tests; the bench fails above 80×.
 */
import { SnapshotOutputDecoder } from '../../src/protocol/helper/chunk-stream.ts';
import type { BenchFigure } from './run.ts';

function time(lines: number): number {
  const bytes = Buffer.from('INSTRUMENTATION_STATUS: agentDeviceProtocol\n'.repeat(lines));
  const t = performance.now();
  const decoder = new SnapshotOutputDecoder();
  decoder.push(bytes);
  decoder.end();
  return performance.now() - t;
}

export async function bench(): Promise<BenchFigure[]> {
  time(2000);
  const small = Math.min(time(4000), time(4000), time(4000));
  const large = Math.min(time(64_000), time(64_000), time(64_000));
  const ratio = Math.round((large / Math.max(small, 0.05)) * 100) / 100;
  if (ratio >= 80) {
    throw new Error(
      `16x the status lines cost ${ratio}x the time (${small.toFixed(2)} ms vs ${large.toFixed(2)} ms)`,
    );
  }
  return [
    {
      bench: 'decoder-status-lines-64000',
      value: Math.round(large * 1000) / 1000,
      unit: 'ms',
      baseline: 'decoder-status-lines-4000',
      ratio,
    },
  ];
}
