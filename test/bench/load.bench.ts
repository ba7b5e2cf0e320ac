/**
 * Load benchmark (issue 16), `npm run bench -- load`: one node under a farm's load, measured from outside.
 *
 * - `devicebridge simulate --count MAX(N)` in its own process (the phones), `devicebridge serve` in its
 *   own process (memory stores, a tokens file, so authentication and the expensive-call rate limit run as in
 *   production), its adb server (Debian adb) spawned by the bridge; the devices come from a devices file.
 * - Clients: CLIENTS tokens, each calling from its own loopback source address (127.0.0.2, …) through its own
 *   keep-alive agent, so neither the per-token nor the per-address limit (12,000/min by default) is hit at
 *   200 snapshots/s; nothing is reconfigured.
 * - For each N (BENCH_LOAD_NS, default 10,50,100,200): acquire N leases, one warm-up snapshot each (opens
 *   the session), then 1 snapshot/s per lease (normalized JSON, `transport: session`, phases spread over the
 *   second) for BENCH_LOAD_SECONDS (default 20 s); then release them.
 *   Figures: load-N-p50/p95/p99-ms, load-N-errors, load-N-rate (snapshots/s served), load-N-bridge-cpu-pct,
 *   load-N-adb-cpu-pct, load-N-simulator-cpu-pct, load-N-driver-cpu-pct, load-N-bridge-rss-mb,
 *   load-N-bridge-cpu-ms-per-snapshot.
 * - One-shot: N = BENCH_LOAD_ONESHOT_N (default 50) at 1/s with `transport: one-shot` for
 *   BENCH_LOAD_ONESHOT_SECONDS (default 10 s): load-oneshot-N-*.
 * - bridge-cpu-ms-per-snapshot: bridge CPU time / snapshots served with CONCURRENCY calls in flight (closed
 *   loop, session, normalized JSON), against the baseline of the same bridge serving `cat` of an equal-size
 *   file through the shell route (HTTP, auth, lease scope, the same adb server and device, no helper
 *   protocol or normalize), in BENCH_LOAD_CPU_ROUNDS (default 5) alternating windows of
 *   BENCH_LOAD_CPU_WINDOW_MS (3 s) each; medians (the same code reads ±40 % from one minute to the next
 *   on these shared machines: more windows, a steadier median). bridge-cpu-system-share: the kernel's part.
 *   adb-cpu-ms-per-snapshot / -per-shell-cat: the adb server's CPU per call in the same windows.
 * - idle-MAX-devices-bridge/adb-cpu-pct: the node with every device attached and nothing to serve.
 *
 * Latency is send → whole body read (the client's view). Bounded: every phase has a fixed length (about
 * 3 minutes in all with the defaults on a quiet machine; a saturated machine slows setup and releases).
 */

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { hashToken } from '../../src/auth/tokens.ts';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper } from '../support/cli.ts';
import { startServeNode, startSimulatorProcess, stopBridge } from '../support/fleet.ts';
import { figureList } from './figures.ts';
import { childrenNamed, cpuMs, cpuPercent, type ProcStat, percentile, procStat } from './load-stats.ts';
import type { BenchFigure } from './run.ts';

const NS = (process.env['BENCH_LOAD_NS'] ?? '10,50,100,200')
  .split(',')
  .filter((s) => s.trim() !== '')
  .map((s) => Number(s.trim()));
const SECONDS = Number(process.env['BENCH_LOAD_SECONDS'] ?? 20);
const ONESHOT_N = Number(process.env['BENCH_LOAD_ONESHOT_N'] ?? 50);
const ONESHOT_SECONDS = Number(process.env['BENCH_LOAD_ONESHOT_SECONDS'] ?? 10);
const CPU_WINDOW_MS = Number(process.env['BENCH_LOAD_CPU_WINDOW_MS'] ?? 3000);
const CPU_ROUNDS = Number(process.env['BENCH_LOAD_CPU_ROUNDS'] ?? 5);
/** BENCH_LOAD_CAT=0 leaves out the baseline windows (a profile of the snapshot path alone). */
const CAT = process.env['BENCH_LOAD_CAT'] !== '0';
const CONCURRENCY = 8;
const IDLE_MS = Number(process.env['BENCH_LOAD_IDLE_MS'] ?? 5000);
const CLIENTS = 8;
/** The bridge's serve process may be profiled: BENCH_LOAD_PROFILE_DIR=DIR adds `--cpu-prof --cpu-prof-dir DIR`. */
const PROFILE_DIR = process.env['BENCH_LOAD_PROFILE_DIR'];
const REQUEST_TIMEOUT_MS = 30_000;
const PAGE_KB = 4;

const SNAPSHOT_BODY = (transport: 'session' | 'one-shot') =>
  JSON.stringify({ format: 'json', transport, waitForIdleTimeoutMs: 0 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Client {
  token: string;
  agent: http.Agent;
}

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/**
 * One call. A kept-alive socket the server closed for idleness just as it was reused fails with
 * ECONNRESET before anything was sent (Node's documented keep-alive race): that one is retried once.
 */
function call(
  base: URL,
  client: Client,
  method: string,
  pathname: string,
  body?: string,
  retried = false,
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path: pathname,
        agent: client.agent,
        headers: {
          authorization: `Bearer ${client.token}`,
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
        },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${pathname} timed out`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (!retried && req.reusedSocket && err.code === 'ECONNRESET') {
        resolve(call(base, client, method, pathname, body, true));
      } else reject(err);
    });
    req.end(body);
  });
}

async function json(base: URL, client: Client, method: string, pathname: string, body?: unknown) {
  const a = await call(base, client, method, pathname, body === undefined ? undefined : JSON.stringify(body));
  // biome-ignore lint/suspicious/noExplicitAny: the bench reads whatever fields the answer has
  return { status: a.status, json: (a.body ? JSON.parse(a.body) : null) as any };
}

interface Lease {
  id: string;
  deviceId: string;
  client: Client;
}

/** A snapshot answer is good when it is 200 and its body is a whole normalized snapshot. */
function goodSnapshot(a: Answer, check: boolean): boolean {
  if (a.status !== 200) return false;
  if (!check) return a.body.startsWith('{') && a.body.endsWith('}');
  const v = JSON.parse(a.body) as { format?: string; snapshot?: { nodeCount?: number; windows?: unknown[] } };
  return v.format === 'json' && Array.isArray(v.snapshot?.windows) && (v.snapshot.nodeCount ?? 0) > 0;
}

interface Processes {
  bridge: number;
  adb: number;
  simulator: number;
}

function stats(p: Processes): { bridge: ProcStat; adb: ProcStat; simulator: ProcStat } {
  return { bridge: procStat(p.bridge), adb: procStat(p.adb), simulator: procStat(p.simulator) };
}

/** Drive 1 snapshot/s per lease for `seconds`; latencies of the answers and the processes' CPU over the run. */
async function drive(
  base: URL,
  leases: Lease[],
  seconds: number,
  transport: 'session' | 'one-shot',
  p: Processes,
) {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let served = 0;
  const body = SNAPSHOT_BODY(transport);
  const before = stats(p);
  const driverBefore = process.cpuUsage();
  const t0 = performance.now() + 50;
  const end = t0 + seconds * 1000;
  let rssMax = 0;
  const rssTimer = setInterval(() => {
    rssMax = Math.max(rssMax, procStat(p.bridge).rssPages);
  }, 500);
  await Promise.all(
    leases.map(async (lease, i) => {
      let next = t0 + (i * 1000) / leases.length;
      let k = 0;
      while (next < end) {
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        try {
          const a = await call(base, lease.client, 'POST', `/v1/leases/${lease.id}/snapshot`, body);
          if (goodSnapshot(a, k % 20 === 0)) {
            latencies.push(a.ms);
            served++;
          } else {
            errors++;
            firstError ??= `${a.status} ${a.body.slice(0, 300)}`;
          }
        } catch (err) {
          errors++;
          firstError ??= String(err);
        }
        k++;
        next += 1000;
      }
    }),
  );
  clearInterval(rssTimer);
  const wallMs = performance.now() - t0;
  const after = stats(p);
  const driver = process.cpuUsage(driverBefore);
  rssMax = Math.max(rssMax, after.bridge.rssPages);
  if (firstError !== undefined) process.stderr.write(`load: first error (${transport}): ${firstError}\n`);
  return {
    latencies,
    errors,
    served,
    wallMs,
    bridgeCpuPct: cpuPercent(before.bridge, after.bridge, wallMs),
    bridgeCpuMs: cpuMs(before.bridge, after.bridge),
    adbCpuPct: cpuPercent(before.adb, after.adb, wallMs),
    simulatorCpuPct: cpuPercent(before.simulator, after.simulator, wallMs),
    driverCpuPct: ((driver.user + driver.system) / 1000 / wallMs) * 100,
    bridgeRssMb: (rssMax * PAGE_KB) / 1024,
  };
}

/** The kernel's share of the bridge's CPU time in each CPU window. */
const systemShare: number[] = [];

/** Closed loop: CONCURRENCY calls in flight for `ms`; bridge CPU ms per call. */
/** The adb server's CPU per call of each window (adb-cpu-ms-per-snapshot / -per-shell-cat). */
const adbMsPerCall = new Map<(i: number) => Promise<boolean>, number[]>();

async function cpuPerCall(p: Processes, ms: number, one: (i: number) => Promise<boolean>): Promise<number> {
  const before = procStat(p.bridge);
  const adbBefore = procStat(p.adb);
  const end = performance.now() + ms;
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      for (let i = w; performance.now() < end; i += CONCURRENCY) {
        if (await one(i)) done++;
        else failed++;
      }
    }),
  );
  const after = procStat(p.bridge);
  const adbAfter = procStat(p.adb);
  if (failed > 0) throw new Error(`${failed} calls failed in a CPU window`);
  adbMsPerCall.set(one, [...(adbMsPerCall.get(one) ?? []), cpuMs(adbBefore, adbAfter) / done]);
  systemShare.push((after.systemTicks - before.systemTicks) / Math.max(1, after.ticks - before.ticks));
  return cpuMs(before, after) / done;
}

export async function bench(): Promise<BenchFigure[]> {
  const maxN = Math.max(...NS, ONESHOT_N, CONCURRENCY);
  const { list: figures, fig } = figureList();

  const tmp = await tempDir('devicebridge-load-');
  const simulator = await startSimulatorProcess(maxN);
  let node: Awaited<ReturnType<typeof startServeNode>> | undefined;
  const clients: Client[] = Array.from({ length: CLIENTS }, (_, k) => ({
    token: randomBytes(24).toString('hex'),
    agent: new http.Agent({ keepAlive: true, maxSockets: 256, localAddress: `127.0.0.${2 + k}` }),
  }));
  try {
    const dataDir = path.join(tmp.dir, 'node');
    await publishFixtureHelper(dataDir);
    const devicesFile = path.join(tmp.dir, 'devices.json');
    await simulator.writeDevicesFile(devicesFile);
    const tokensFile = path.join(tmp.dir, 'tokens.json');
    await writeFile(
      tokensFile,
      JSON.stringify(
        clients.map((c, k) => ({
          name: `load-${k}`,
          tenant: 'load',
          role: 'client',
          sha256: hashToken(c.token),
          capabilities: ['shell'],
        })),
      ),
    );
    node = await startServeNode({
      dataDir,
      redisUrl: null,
      env: {
        DEVICEBRIDGE_DEVICES_FILE: devicesFile,
        DEVICEBRIDGE_TOKENS_FILE: tokensFile,
      },
      ...(PROFILE_DIR === undefined ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] }),
    });
    const base = new URL(node.url);
    const bridgePid = node.child.pid!;
    // Wait for every device to be online (the bridge's adb server connects them).
    const deadline = Date.now() + 120_000;
    const serials = new Map<string, string>();
    for (;;) {
      const list = await json(base, clients[0]!, 'GET', '/v1/devices');
      const devices = list.json.devices as Array<{ id: string; serial: string; state: string }>;
      for (const d of devices) serials.set(d.id, d.serial);
      const online = devices.filter((d) => d.state === 'online').length;
      if (online >= maxN) break;
      if (Date.now() > deadline) throw new Error(`only ${online} of ${maxN} devices came online`);
      await sleep(500);
    }
    const adbPids = childrenNamed(bridgePid, 'adb');
    if (adbPids.length !== 1)
      throw new Error(`expected one adb server under the bridge, found ${adbPids.length}`);
    const p: Processes = { bridge: bridgePid, adb: adbPids[0]!, simulator: simulator.child.pid! };

    const acquire = async (n: number): Promise<Lease[]> => {
      const leases: Lease[] = [];
      for (let i = 0; i < n; i++) {
        const client = clients[i % CLIENTS]!;
        const a = await json(base, client, 'POST', '/v1/leases', { ttlSeconds: 900 });
        if (a.status !== 201) throw new Error(`acquire ${i}: ${a.status} ${JSON.stringify(a.json)}`);
        leases.push({ id: a.json.id, deviceId: a.json.deviceId, client });
      }
      return leases;
    };
    const release = async (leases: Lease[]) => {
      for (const l of leases) {
        const a = await json(base, l.client, 'DELETE', `/v1/leases/${l.id}`);
        if (a.status !== 200) throw new Error(`release ${l.id}: ${a.status} ${JSON.stringify(a.json)}`);
      }
    };
    const warm = async (leases: Lease[], transport: 'session' | 'one-shot') => {
      const body = SNAPSHOT_BODY(transport);
      for (let i = 0; i < leases.length; i += 10) {
        await Promise.all(
          leases.slice(i, i + 10).map(async (l) => {
            const a = await call(base, l.client, 'POST', `/v1/leases/${l.id}/snapshot`, body);
            if (!goodSnapshot(a, true))
              throw new Error(`warm-up snapshot of ${l.id}: ${a.status} ${a.body.slice(0, 300)}`);
          }),
        );
      }
    };

    // What the node costs with nothing to serve (health probes of every device, heartbeats): part of
    // every per-snapshot figure below, most at small N.
    {
      const before = stats(p);
      const t = performance.now();
      await sleep(IDLE_MS);
      const after = stats(p);
      const wall = performance.now() - t;
      fig(
        `idle-${maxN}-devices-bridge-cpu-pct`,
        cpuPercent(before.bridge, after.bridge, wall),
        '% of a core',
      );
      fig(`idle-${maxN}-devices-adb-cpu-pct`, cpuPercent(before.adb, after.adb, wall), '% of a core');
    }

    // Bridge CPU per snapshot against a raw `cat` of the same bytes through the same bridge and adb server.
    {
      const leases = await acquire(CONCURRENCY);
      await warm(leases, 'session');
      const xml = await call(
        base,
        leases[0]!.client,
        'POST',
        `/v1/leases/${leases[0]!.id}/snapshot`,
        JSON.stringify({ format: 'xml', transport: 'session', waitForIdleTimeoutMs: 0 }),
      );
      const bytes = Buffer.from((JSON.parse(xml.body) as { xml: string }).xml, 'utf8');
      const local = path.join(tmp.dir, 'equal-size.xml');
      await writeFile(local, bytes);
      const ex = promisify(execFile);
      for (const l of leases) {
        await ex('adb', [
          '-P',
          String(node.adbPort),
          '-s',
          serials.get(l.deviceId)!,
          'push',
          local,
          '/data/local/tmp/equal-size.xml',
        ]);
      }
      const catBody = JSON.stringify({
        argv: ['cat', '/data/local/tmp/equal-size.xml'],
        maxOutputBytes: bytes.length * 2,
      });
      const snapshotBody = SNAPSHOT_BODY('session');
      const snap = async (i: number) => {
        const l = leases[i % leases.length]!;
        return goodSnapshot(
          await call(base, l.client, 'POST', `/v1/leases/${l.id}/snapshot`, snapshotBody),
          false,
        );
      };
      const cat = async (i: number) => {
        const l = leases[i % leases.length]!;
        const a = await call(base, l.client, 'POST', `/v1/leases/${l.id}/shell`, catBody);
        return (
          a.status === 200 &&
          Buffer.byteLength((JSON.parse(a.body) as { stdout: string }).stdout) === bytes.length
        );
      };
      await cpuPerCall(p, 1000, snap);
      if (CAT) await cpuPerCall(p, 1000, cat);
      const snapMs: number[] = [];
      const catMs: number[] = [];
      for (let r = 0; r < CPU_ROUNDS; r++) {
        snapMs.push(await cpuPerCall(p, CPU_WINDOW_MS, snap));
        if (CAT) catMs.push(await cpuPerCall(p, CPU_WINDOW_MS, cat));
      }
      const s = percentile(snapMs, 50);
      const c = percentile(catMs, 50);
      fig('bridge-cpu-ms-per-snapshot', s, 'ms', 'bridge-cpu-ms-per-shell-cat', s / c);
      fig('bridge-cpu-ms-per-shell-cat', c, 'ms');
      fig('bridge-cpu-system-share', percentile(systemShare, 50), 'fraction');
      const adbSnap = percentile(adbMsPerCall.get(snap)!.slice(1), 50);
      const adbCat = CAT ? percentile(adbMsPerCall.get(cat)!.slice(1), 50) : Number.NaN;
      fig(
        'adb-cpu-ms-per-snapshot',
        adbSnap,
        'ms',
        CAT ? 'adb-cpu-ms-per-shell-cat' : null,
        CAT ? adbSnap / adbCat : null,
      );
      if (CAT) fig('adb-cpu-ms-per-shell-cat', adbCat, 'ms');
      fig('snapshot-xml-bytes', bytes.length, 'bytes');
      await release(leases);
    }

    for (const n of NS) {
      const leases = await acquire(n);
      await warm(leases, 'session');
      const r = await drive(base, leases, SECONDS, 'session', p);
      fig(`load-${n}-p50-ms`, percentile(r.latencies, 50), 'ms');
      fig(`load-${n}-p95-ms`, percentile(r.latencies, 95), 'ms');
      fig(`load-${n}-p99-ms`, percentile(r.latencies, 99), 'ms');
      fig(`load-${n}-errors`, r.errors, 'count');
      fig(`load-${n}-rate`, (r.served * 1000) / r.wallMs, 'snapshots/s');
      fig(`load-${n}-bridge-cpu-pct`, r.bridgeCpuPct, '% of a core');
      fig(`load-${n}-bridge-cpu-ms-per-snapshot`, r.bridgeCpuMs / Math.max(1, r.served), 'ms');
      fig(`load-${n}-adb-cpu-pct`, r.adbCpuPct, '% of a core');
      fig(`load-${n}-simulator-cpu-pct`, r.simulatorCpuPct, '% of a core');
      fig(`load-${n}-driver-cpu-pct`, r.driverCpuPct, '% of a core');
      fig(`load-${n}-bridge-rss-mb`, r.bridgeRssMb, 'MB');
      await release(leases);
    }

    if (ONESHOT_N > 0 && ONESHOT_SECONDS > 0) {
      const n = ONESHOT_N;
      const leases = await acquire(n);
      await warm(leases, 'one-shot');
      const r = await drive(base, leases, ONESHOT_SECONDS, 'one-shot', p);
      fig(`load-oneshot-${n}-p50-ms`, percentile(r.latencies, 50), 'ms');
      fig(`load-oneshot-${n}-p95-ms`, percentile(r.latencies, 95), 'ms');
      fig(`load-oneshot-${n}-p99-ms`, percentile(r.latencies, 99), 'ms');
      fig(`load-oneshot-${n}-errors`, r.errors, 'count');
      fig(`load-oneshot-${n}-bridge-cpu-pct`, r.bridgeCpuPct, '% of a core');
      fig(`load-oneshot-${n}-bridge-cpu-ms-per-snapshot`, r.bridgeCpuMs / Math.max(1, r.served), 'ms');
      fig(`load-oneshot-${n}-adb-cpu-pct`, r.adbCpuPct, '% of a core');
      fig(`load-oneshot-${n}-simulator-cpu-pct`, r.simulatorCpuPct, '% of a core');
      await release(leases);
    }
  } finally {
    for (const c of clients) c.agent.destroy();
    if (node !== undefined) await stopBridge(node);
    await simulator.stop();
    await tmp.cleanup();
  }
  return figures;
}
