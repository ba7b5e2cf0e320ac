/**
 * The reset between tenants over a simulated device (its own process) through the real adb server:
 * - reset-ms: p50 / p95 of a reset after a tenant left a typical mess (an app, files in
 *   /data/local/tmp and /sdcard, a secure setting, a background process), with the adb round trips
 *   it made; the baseline is the p50 of one `adb shell true` round trip measured in the same
 *   interleaved loop (the ratio says how many plain round trips a reset costs).
 * - reset-clean-ms: the same for a device nobody touched (read, nothing to undo, home, verify).
 */
import { performance } from 'node:perf_hooks';
import { AdbRuntime } from '../../src/adb/runtime.ts';
import { captureBaseline } from '../../src/devices/baseline-capture.ts';
import { DEFAULT_RESET_POLICY } from '../../src/devices/reset-policy.ts';
import { type ResetTarget, resetDevice } from '../../src/helpers/device-reset.ts';
import { startCli } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';
import type { BenchFigure } from './run.ts';

const RUNS = Number(process.env['BENCH_RESET_RUNS'] ?? 40);

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/** What a tenant leaves: one shell round trip (not timed). */
const MESS = [
  'echo tenant > /data/local/tmp/tenant.bin',
  'mkdir -p /sdcard/Download/stash/deep && echo x > /sdcard/Download/stash/deep/f',
  'echo y > /sdcard/tenant.txt',
  'settings put secure some_marker 1',
  'settings put global adb_enabled 0',
  'nohup sleep 600 > /dev/null 2>&1 &',
].join('; ');

export async function bench(): Promise<BenchFigure[]> {
  const sim = await startCli(['simulate', '--port', String(await freePort()), '--json']);
  const { address } = JSON.parse(sim.firstLine) as { address: string };
  const runtime = await AdbRuntime.start({ port: await freePort() });
  try {
    await runtime.tunnels.add(address);
    if (!(await runtime.tunnels.waitFor(address, 'device', 10_000)))
      throw new Error(`${address} did not come online`);
    const { client } = runtime;
    const target: ResetTarget = {
      serial: address,
      shell: (command, options) => client.shell(address, command, options),
      forwards: async () => (await client.listForwards()).filter((f) => f.serial === address),
      removeForward: (local) => client.removeForward(address, local),
      reverses: () => client.listReverses(address),
      removeReverse: (local) => client.removeReverse(address, local),
    };
    const policy = DEFAULT_RESET_POLICY;
    const baseline = await captureBaseline(target, policy, Date.now());
    const context = { helperPackages: new Map(), keepPaths: new Set<string>(), keptApps: new Map() };
    const dirty: number[] = [];
    const clean: number[] = [];
    const trip: number[] = [];
    let dirtyTrips = 0;
    let cleanTrips = 0;
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now();
      await client.shell(address, 'true');
      trip.push(performance.now() - t);

      await client.shell(address, MESS);
      t = performance.now();
      const r = await resetDevice(target, baseline, policy, context);
      dirty.push(performance.now() - t);
      if (r.failures.length > 0) throw new Error(`reset failed: ${r.failures.join('; ')}`);
      dirtyTrips = r.roundTrips;

      t = performance.now();
      const c = await resetDevice(target, baseline, policy, context);
      clean.push(performance.now() - t);
      if (c.failures.length > 0) throw new Error(`clean reset failed: ${c.failures.join('; ')}`);
      cleanTrips = c.roundTrips;
    }
    const tripP50 = percentile(trip, 50);
    const figure = (bench: string, samples: number[], trips: number): BenchFigure[] => {
      const p50 = percentile(samples, 50);
      const p95 = percentile(samples, 95);
      process.stderr.write(
        `${bench}: p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms, ${trips} adb round trips; one round trip p50 ${tripP50.toFixed(2)} ms (${RUNS} runs)\n`,
      );
      return [
        {
          bench: `${bench}-p50`,
          value: round(p50),
          unit: 'ms',
          baseline: 'adb-shell-round-trip-p50',
          ratio: round(p50 / tripP50),
        },
        {
          bench: `${bench}-p95`,
          value: round(p95),
          unit: 'ms',
          baseline: 'adb-shell-round-trip-p50',
          ratio: round(p95 / tripP50),
        },
        { bench: `${bench}-round-trips`, value: trips, unit: 'count', baseline: null, ratio: null },
      ];
    };
    return [
      ...figure('reset-ms', dirty, dirtyTrips),
      ...figure('reset-clean-ms', clean, cleanTrips),
      { bench: 'adb-shell-round-trip-p50', value: round(tripP50), unit: 'ms', baseline: null, ratio: null },
    ];
  } finally {
    await runtime.close();
    sim.child.kill('SIGTERM');
  }
}
