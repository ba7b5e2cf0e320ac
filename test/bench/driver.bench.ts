/**
 * Driver benchmarks over the simulator through the real adb server (one run, same machine):
 * - snapshot-overhead: p50 of a one-shot snapshot through the bridge minus p50 of the raw transfer of
 *   an equal-size file through the same adb server (`exec:cat`, what `adb exec-out cat` does), in ms.
 *   Split in the same interleaved loop by a third measurement, the raw shell-v2 stream of the very
 *   `am instrument` command the one-shot runs (its bytes read to the exit, not decoded):
 *   snapshot-overhead-device = that stream − `exec:cat` (the simulated device's helper run plus seed
 *   000's base64 + status framing, ~1.5× the XML's bytes), snapshot-overhead-bridge = the one-shot −
 *   that stream (what the bridge adds: decoding while the bytes stream in, the result checks, the
 *   driver's deadline, lock and bookkeeping).
 * - session-vs-oneshot: p50/p95 of session snapshots and one-shot snapshots of the same screen.
 * - session-command-cpu: CPU time per session command (`viewport`: a small answer, so the connection is
 *   most of it) of this process (the bridge side) and of the adb server, through the forward from a
 *   unix socket (what the bridge's own server gets) against one from a loopback TCP port (an external
 *   server), in alternating blocks of the same run.
 */

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { ForwardLedger } from '../../src/adb/forward-ledger.ts';
import { AdbRuntime } from '../../src/adb/runtime.ts';
import { ArtifactCache } from '../../src/artifacts/cache.ts';
import { buildInstrumentCommand, captureOptions } from '../../src/helpers/snapshot/capture-options.ts';
import { adbHelperDevice } from '../../src/helpers/snapshot/device.ts';
import { SnapshotDriver } from '../../src/helpers/snapshot/driver.ts';
import { EnsureVerdicts } from '../../src/helpers/snapshot/ensure-helper.ts';
import { tempDir } from '../support/bridge.ts';
import { startCli } from '../support/cli.ts';
import { fixtureApk, fixtureManifest, freePort } from '../support/device-bed.ts';
import { childrenNamed, cpuMs, procStat } from './load-stats.ts';
import type { BenchFigure } from './run.ts';

/** Samples per figure: p50 differences of ~1 ms on a shared machine need more than a few dozen. */
const RUNS = Number(process.env['BENCH_DRIVER_RUNS'] ?? 150);
/**
 * No idle wait: the helper's idle wait is device time (the simulator sleeps ~1 ms for it); the overhead
 * figure is about what the bridge adds on top of moving the bytes.
 */
const NO_IDLE = { waitForIdleTimeoutMs: 0 };

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export async function bench(): Promise<BenchFigure[]> {
  // The simulated device runs in its own process, like a phone: the bridge's thread does only bridge work.
  const sim = await startCli(['simulate', '--port', String(await freePort()), '--json']);
  const { address } = JSON.parse(sim.firstLine) as { address: string };
  const runtime = await AdbRuntime.start({ port: await freePort() });
  const bed = { client: runtime.client, server: runtime.server };
  const tmp = await tempDir('devicebridge-bench-');
  const figures: BenchFigure[] = [];
  try {
    await runtime.tunnels.add(address);
    if (!(await runtime.tunnels.waitFor(address, 'device', 10_000)))
      throw new Error(`${address} did not come online`);
    const manifest = fixtureManifest('snapshot-helper-v1.apk');
    const cache = new ArtifactCache(path.join(tmp.dir, 'cache'));
    const device = adbHelperDevice({
      client: runtime.client,
      serial: address,
      ledger: runtime.ledger,
      locks: runtime.locks,
    });
    const driver = new SnapshotDriver(device, manifest, {
      verdicts: new EnsureVerdicts(),
      apk: fixtureApk(cache, 'snapshot-helper-v1.apk', manifest),
    });
    await driver.ensure();
    const serial = address;
    const sample = await driver.snapshot({ transport: 'one-shot', capture: NO_IDLE });
    const bytes = Buffer.from(sample.xml, 'utf8');
    const local = path.join(tmp.dir, 'equal-size.xml');
    await writeFile(local, bytes);
    await bed.client.push(serial, local, '/data/local/tmp/equal-size.xml');

    // The one-shot's own command, streamed raw over shell v2 (the bridge's transport) to its exit.
    const instrument = buildInstrumentCommand({
      runner: manifest.instrumentationRunner!,
      mode: 'snapshot',
      capture: captureOptions(NO_IDLE),
    });
    let streamedBytes = 0;
    const instrumentStream = async () => {
      const stream = await bed.client.shellStream(serial, instrument, { timeoutMs: 20_000 });
      let n = 0;
      stream.stdout.on('data', (d: Buffer) => {
        n += d.length;
      });
      const exit = await stream.exit;
      if (exit !== 0 || n < bytes.length) throw new Error(`am instrument exited ${exit} after ${n} bytes`);
      streamedBytes = n;
    };

    // Interleave the measurements so load changes hit all alike.
    const oneShot: number[] = [];
    const raw: number[] = [];
    const streamed: number[] = [];
    for (let i = 0; i < 5; i++) {
      await driver.snapshot({ transport: 'one-shot', capture: NO_IDLE });
      await bed.client.execOut(serial, 'cat /data/local/tmp/equal-size.xml');
      await instrumentStream();
    }
    for (let i = 0; i < RUNS; i++) {
      oneShot.push(await time(() => driver.snapshot({ transport: 'one-shot', capture: NO_IDLE })));
      raw.push(
        await time(async () => {
          const out = await bed.client.execOut(serial, 'cat /data/local/tmp/equal-size.xml');
          if (out.length !== bytes.length)
            throw new Error(`raw transfer returned ${out.length} of ${bytes.length} bytes`);
        }),
      );
      streamed.push(await time(instrumentStream));
    }
    const oneShotP50 = percentile(oneShot, 50);
    const rawP50 = percentile(raw, 50);
    const streamedP50 = percentile(streamed, 50);
    // A difference of two p50s against its baseline, and the p50s themselves.
    const above = (bench: string, a: number, b: number, baseline: string) =>
      figures.push({ bench, value: round(a - b), unit: 'ms', baseline, ratio: round(a / b) });
    const plain = (bench: string, value: number, unit: string) =>
      figures.push({ bench, value, unit, baseline: null, ratio: null });
    above('snapshot-overhead', oneShotP50, rawP50, 'exec-out-cat-p50');
    above('snapshot-overhead-bridge', oneShotP50, streamedP50, 'instrument-stream-p50');
    above('snapshot-overhead-device', streamedP50, rawP50, 'exec-out-cat-p50');
    plain('instrument-stream-p50', round(streamedP50), `ms (${streamedBytes} B of am instrument output)`);
    plain('snapshot-one-shot-p50', round(oneShotP50), 'ms');
    plain('exec-out-cat-p50', round(rawP50), 'ms');
    plain('snapshot-bytes', bytes.length, 'bytes');

    // For reference: the adb CLI's own `exec-out cat` (includes starting the adb client process).
    const cli: number[] = [];
    const ex = promisify(execFile);
    for (let i = 0; i < Math.min(RUNS, 15); i++) {
      cli.push(
        await time(() =>
          ex(
            'adb',
            [
              '-P',
              String(bed.server.port),
              '-s',
              serial,
              'exec-out',
              'cat',
              '/data/local/tmp/equal-size.xml',
            ],
            { encoding: 'buffer', maxBuffer: 64 << 20 },
          ),
        ),
      );
    }
    figures.push({
      bench: 'adb-cli-exec-out-cat-p50',
      value: round(percentile(cli, 50)),
      unit: 'ms',
      baseline: null,
      ratio: null,
    });

    const session: number[] = [];
    const oneShotB: number[] = [];
    await driver.snapshot({ transport: 'session', capture: NO_IDLE });
    for (let i = 0; i < RUNS; i++)
      session.push(await time(() => driver.snapshot({ transport: 'session', capture: NO_IDLE })));
    await driver.close();
    for (let i = 0; i < RUNS; i++)
      oneShotB.push(await time(() => driver.snapshot({ transport: 'one-shot', capture: NO_IDLE })));
    const sP50 = percentile(session, 50);
    const oP50 = percentile(oneShotB, 50);
    figures.push({
      bench: 'session-snapshot-p50',
      value: round(sP50),
      unit: 'ms',
      baseline: 'one-shot-snapshot-p50',
      ratio: round(sP50 / oP50),
    });
    figures.push({
      bench: 'session-snapshot-p95',
      value: round(percentile(session, 95)),
      unit: 'ms',
      baseline: 'one-shot-snapshot-p95',
      ratio: round(percentile(session, 95) / percentile(oneShotB, 95)),
    });
    figures.push({
      bench: 'one-shot-snapshot-p50',
      value: round(oP50),
      unit: 'ms',
      baseline: null,
      ratio: null,
    });
    figures.push({
      bench: 'one-shot-snapshot-p95',
      value: round(percentile(oneShotB, 95)),
      unit: 'ms',
      baseline: null,
      ratio: null,
    });
    await driver.close();

    // Session commands through a unix-socket forward (runtime.ledger) and a TCP one (a ledger without
    // a socket directory, as for an external server), alternating blocks; CPU per command.
    const adbPid = childrenNamed(process.pid, 'adb')[0];
    const tcpLedger = new ForwardLedger(runtime.client, { ownsServer: false });
    const over = (ledger: ForwardLedger) =>
      new SnapshotDriver(
        adbHelperDevice({ client: runtime.client, serial, ledger, locks: runtime.locks }),
        manifest,
        { verdicts: new EnsureVerdicts(), apk: fixtureApk(cache, 'snapshot-helper-v1.apk', manifest) },
      );
    const cpu = {
      unix: [] as number[],
      tcp: [] as number[],
      adbUnix: [] as number[],
      adbTcp: [] as number[],
    };
    const BLOCK = Math.max(10, Math.round(RUNS / 2));
    for (let round = 0; round < 4; round++) {
      for (const kind of round % 2 === 0 ? (['unix', 'tcp'] as const) : (['tcp', 'unix'] as const)) {
        const d = over(kind === 'unix' ? runtime.ledger : tcpLedger);
        await d.viewport({ transport: 'session' });
        const adbBefore = adbPid === undefined ? undefined : procStat(adbPid);
        const before = process.cpuUsage();
        for (let i = 0; i < BLOCK; i++) await d.viewport({ transport: 'session' });
        const used = process.cpuUsage(before);
        cpu[kind].push((used.user + used.system) / BLOCK);
        if (adbBefore !== undefined) {
          const adbMs = cpuMs(adbBefore, procStat(adbPid!));
          cpu[kind === 'unix' ? 'adbUnix' : 'adbTcp'].push((adbMs * 1000) / BLOCK);
        }
        await d.close();
      }
    }
    const med = (xs: number[]) => percentile(xs, 50);
    figures.push({
      bench: 'session-command-cpu-unix',
      value: round(med(cpu.unix)),
      unit: 'µs/command (bridge side, viewport)',
      baseline: 'session-command-cpu-tcp',
      ratio: round(med(cpu.unix) / med(cpu.tcp)),
    });
    figures.push({
      bench: 'session-command-cpu-tcp',
      value: round(med(cpu.tcp)),
      unit: 'µs/command (bridge side, viewport)',
      baseline: null,
      ratio: null,
    });
    if (cpu.adbUnix.length > 0) {
      figures.push({
        bench: 'session-command-adb-cpu-unix',
        value: round(med(cpu.adbUnix)),
        unit: 'µs/command (adb server, 10 ms ticks)',
        baseline: 'session-command-adb-cpu-tcp',
        ratio: round(med(cpu.adbUnix) / med(cpu.adbTcp)),
      });
      figures.push({
        bench: 'session-command-adb-cpu-tcp',
        value: round(med(cpu.adbTcp)),
        unit: 'µs/command (adb server, 10 ms ticks)',
        baseline: null,
        ratio: null,
      });
    }
  } finally {
    await runtime.close();
    sim.child.kill('SIGTERM');
    await tmp.cleanup();
  }
  return figures;
}
