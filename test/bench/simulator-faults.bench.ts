/**
 * How much the simulator's latency and bandwidth faults slow what the real adb server (private
 * port) sees; the tests (test/integration/simulator-faults.test.ts) only count that the faults act.
 * - sim-latency-150-echo-ms: p50 of `adb shell echo hi` with `latency-ms=150` (its OKAY+WRTE leave
 *   after 150 ms, its CLSE only after the host acknowledged the WRTE: expect ≥ 300 ms); baseline
 *   the p50 of the same command without the fault, measured interleaved in the same run.
 * - sim-bandwidth-1MiB-pull-ms: p50 of `adb exec-out cat` of 512 KiB with `bandwidth=1m` (expect
 *   ≥ 500 ms); baseline the same pull without the fault. The ratio says how strongly the cap binds.
 */
import { randomBytes } from 'node:crypto';
import { startSimulator } from '../../src/simulator/index.ts';
import { startAdbServer } from '../integration/support/adb-server.ts';
import type { BenchFigure } from './run.ts';

const RUNS = Number(process.env['BENCH_SIM_FAULT_RUNS'] ?? 7);
const LATENCY_MS = 150;
const BANDWIDTH = 1024 * 1024;
const FILE_BYTES = 512 * 1024;

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round = (n: number) => Math.round(n * 1000) / 1000;

async function timed(fn: () => Promise<{ code: number; stderr: string }>): Promise<number> {
  const start = performance.now();
  const result = await fn();
  const ms = performance.now() - start;
  if (result.code !== 0) throw new Error(`adb failed: ${result.stderr}`);
  return ms;
}

export async function bench(): Promise<BenchFigure[]> {
  const sim = await startSimulator({ port: 0 });
  const device = sim.devices[0]!;
  device.android.fs.writeFile('/data/local/tmp/half.bin', randomBytes(FILE_BYTES));
  const adb = await startAdbServer();
  try {
    await adb.connect(device.address);
    const echo = () => adb.adb(['-s', device.serial, 'shell', 'echo hi']);
    const pull = () => adb.adb(['-s', device.serial, 'exec-out', 'cat /data/local/tmp/half.bin']);
    await echo(); // warm-up
    const samples = {
      echo: [] as number[],
      slowEcho: [] as number[],
      pull: [] as number[],
      slowPull: [] as number[],
    };
    for (let i = 0; i < RUNS; i++) {
      device.setFaults({});
      samples.echo.push(await timed(echo));
      samples.pull.push(await timed(pull));
      device.setFaults({ latencyMs: LATENCY_MS });
      samples.slowEcho.push(await timed(echo));
      device.setFaults({ bandwidthBytesPerSec: BANDWIDTH });
      samples.slowPull.push(await timed(pull));
    }
    device.setFaults({});
    const figure = (bench: string, slow: number[], baseline: string, fast: number[]): BenchFigure => ({
      bench,
      value: round(median(slow)),
      unit: 'ms',
      baseline,
      ratio: round(median(slow) / median(fast)),
    });
    return [
      figure(`sim-latency-${LATENCY_MS}-echo-ms`, samples.slowEcho, 'echo-no-fault-ms', samples.echo),
      figure('sim-bandwidth-1MiB-pull-ms', samples.slowPull, 'pull-no-fault-ms', samples.pull),
    ];
  } finally {
    await adb.adb(['disconnect', device.address]).catch(() => undefined);
    await adb.stop();
    await sim.close();
  }
}
