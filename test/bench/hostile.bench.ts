/**
 * Honest traffic under attack, `npm run bench -- hostile`: one node (`devicebridge serve`, memory
 * stores, a tokens file) driving simulated devices in their own process; an honest client leases a
 * device and takes snapshots in a closed loop (one at a time, session transport), first alone, then
 * while, in the same run, the attack mix runs against the same node:
 * - slow connections: BENCH_HOSTILE_SLOW (default 1,000) connections from one address that send the
 *   start of a request line and headers, then nothing (reopened when the server closes them);
 * - failed authentications: a loop of requests with a wrong token from another address;
 * - shell floods: another tenant's lease running `yes` with the largest output cap, 4 at a time;
 * - uploads: that tenant posting 32 MiB of junk as an app, 2 at a time.
 * Figures: honest-p95-ms alone and honest-p95-under-attack-ms (ratio to alone), honest errors under
 * attack, the attacks' answers by status, and the bridge's RSS (peak under attack, MiB, ratio to the
 * peak alone). BENCH_HOSTILE_SECONDS (default 15) per phase. Bounded: two phases plus setup.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { hashToken } from '../../src/auth/tokens.ts';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper } from '../support/cli.ts';
import { startServeNode, startSimulatorProcess, stopBridge } from '../support/fleet.ts';
import { figureList } from './figures.ts';
import { percentile, procStat } from './load-stats.ts';
import type { BenchFigure } from './run.ts';

const SECONDS = Number(process.env['BENCH_HOSTILE_SECONDS'] ?? 15);
const SLOW = Number(process.env['BENCH_HOSTILE_SLOW'] ?? 1000);
const UPLOAD_BYTES = 32 * 1024 * 1024;
/** Which attacks run (BENCH_HOSTILE_MIX, comma separated; default all): slow, auth, shell, upload. */
const MIX = new Set(
  (process.env['BENCH_HOSTILE_MIX'] ?? 'slow,auth,shell,upload').split(',').map((s) => s.trim()),
);
const PAGE_BYTES = 4096;

interface Answer {
  status: number;
  body: string;
  ms: number;
}

function call(
  base: URL,
  token: string,
  method: string,
  pathname: string,
  options: { body?: string | Buffer; type?: string; agent?: http.Agent; localAddress?: string } = {},
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path: pathname,
        ...(options.agent ? { agent: options.agent } : { agent: false }),
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        headers: {
          authorization: `Bearer ${token}`,
          ...(options.body === undefined
            ? {}
            : {
                'content-type': options.type ?? 'application/json',
                'content-length': Buffer.byteLength(options.body),
              }),
        },
        timeout: 60_000,
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
        res.on('error', () => resolve({ status: 0, body: '', ms: performance.now() - started }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ status: 0, body: String(err), ms: performance.now() - started }));
    req.end(options.body);
  });
}

/** Snapshots in a closed loop for `seconds`; the latencies of the good answers and the errors. */
async function honestLoop(base: URL, token: string, agent: http.Agent, leaseId: string, seconds: number) {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const end = performance.now() + seconds * 1000;
  const body = JSON.stringify({ format: 'json', transport: 'session', waitForIdleTimeoutMs: 0 });
  while (performance.now() < end) {
    const a = await call(base, token, 'POST', `/v1/leases/${leaseId}/snapshot`, { body, agent });
    if (a.status === 200 && a.body.startsWith('{')) latencies.push(a.ms);
    else {
      errors++;
      firstError ??= `${a.status} ${a.body.slice(0, 200)}`;
    }
  }
  if (firstError !== undefined) process.stderr.write(`hostile: first honest error: ${firstError}\n`);
  return { latencies, errors };
}

/** Peak RSS of `pid` (MiB) sampled while `work` runs. */
async function peakRss<T>(pid: number, work: Promise<T>): Promise<{ result: T; peakMiB: number }> {
  let peak = procStat(pid).rssPages;
  const timer = setInterval(() => {
    peak = Math.max(peak, procStat(pid).rssPages);
  }, 200);
  try {
    const result = await work;
    return { result, peakMiB: (peak * PAGE_BYTES) / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

/** The attack mix, until `stop` is aborted; counts its answers by kind and status. */
function attack(base: URL, evil: { token: string; leaseId: string }, stop: AbortSignal) {
  const counts: Record<string, number> = {};
  const count = (kind: string, status: number | string) => {
    const key = `${kind}-${status}`;
    counts[key] = (counts[key] ?? 0) + 1;
  };
  const loops: Promise<void>[] = [];
  // Slow connections from 127.0.0.3, reopened when the server closes them.
  const sockets = new Set<net.Socket>();
  const slowOne = () => {
    if (stop.aborted) return;
    const s = net.connect({ host: base.hostname, port: Number(base.port), localAddress: '127.0.0.3' });
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('connect', () => s.write('POST /v1/manifests/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
    s.on('close', () => {
      sockets.delete(s);
      count('slow', 'closed');
      if (!stop.aborted) setTimeout(slowOne, 50);
    });
  };
  if (MIX.has('slow')) for (let i = 0; i < SLOW; i++) slowOne();
  // Failed authentications from 127.0.0.4.
  if (MIX.has('auth'))
    loops.push(
      (async () => {
        while (!stop.aborted) {
          const a = await call(base, 'not-a-token', 'GET', '/v1/devices', { localAddress: '127.0.0.4' });
          count('auth', a.status);
        }
      })(),
    );
  // Shell floods on the attacker's own lease.
  for (let i = 0; i < (MIX.has('shell') ? 4 : 0); i++) {
    loops.push(
      (async () => {
        const body = JSON.stringify({
          argv: ['yes', 'flood'],
          maxOutputBytes: 8 * 1024 * 1024,
          timeoutMs: 30_000,
        });
        while (!stop.aborted) {
          const a = await call(base, evil.token, 'POST', `/v1/leases/${evil.leaseId}/shell`, {
            body,
            localAddress: '127.0.0.5',
          });
          count('shell', a.status);
          if (a.status === 429) await new Promise((r) => setTimeout(r, 100));
        }
      })(),
    );
  }
  // Uploads of junk as the attacker's app under test.
  const junk = randomBytes(UPLOAD_BYTES);
  for (let i = 0; i < (MIX.has('upload') ? 2 : 0); i++) {
    loops.push(
      (async () => {
        while (!stop.aborted) {
          const a = await call(base, evil.token, 'POST', `/v1/leases/${evil.leaseId}/apps`, {
            body: junk,
            type: 'application/vnd.android.package-archive',
            localAddress: '127.0.0.6',
          });
          count('upload', a.status);
          if (a.status === 429) await new Promise((r) => setTimeout(r, 100));
        }
      })(),
    );
  }
  return {
    counts,
    async done() {
      for (const s of sockets) s.destroy();
      await Promise.all(loops);
    },
  };
}

export async function bench(): Promise<BenchFigure[]> {
  const { list: figures, fig } = figureList(2);

  const tmp = await tempDir('devicebridge-hostile-');
  const simulator = await startSimulatorProcess(2);
  let node: Awaited<ReturnType<typeof startServeNode>> | undefined;
  const honest = randomBytes(24).toString('hex');
  const evil = randomBytes(24).toString('hex');
  const agent = new http.Agent({ keepAlive: true, localAddress: '127.0.0.2' });
  try {
    const dataDir = path.join(tmp.dir, 'node');
    await publishFixtureHelper(dataDir);
    const devicesFile = path.join(tmp.dir, 'devices.json');
    await simulator.writeDevicesFile(devicesFile);
    const tokensFile = path.join(tmp.dir, 'tokens.json');
    await writeFile(
      tokensFile,
      JSON.stringify([
        { name: 'honest', tenant: 'honest', role: 'client', sha256: hashToken(honest) },
        { name: 'evil', tenant: 'evil', role: 'client', sha256: hashToken(evil), capabilities: ['shell'] },
      ]),
    );
    node = await startServeNode({
      dataDir,
      redisUrl: null,
      env: { DEVICEBRIDGE_DEVICES_FILE: devicesFile, DEVICEBRIDGE_TOKENS_FILE: tokensFile },
    });
    const base = new URL(node.url);
    const acquire = async (token: string) => {
      for (let i = 0; i < 240; i++) {
        const a = await call(base, token, 'POST', '/v1/leases', {
          body: JSON.stringify({ ttlSeconds: 600 }),
        });
        if (a.status === 201) return (JSON.parse(a.body) as { id: string }).id;
        await new Promise((r) => setTimeout(r, 500)); // the devices are still coming online
      }
      throw new Error('no lease');
    };
    const honestLease = await acquire(honest);
    const evilLease = await acquire(evil);
    await honestLoop(base, honest, agent, honestLease, 1); // warm: the session opens

    const pid = node.child.pid!;
    const alone = await peakRss(pid, honestLoop(base, honest, agent, honestLease, SECONDS));
    const stop = new AbortController();
    const running = attack(base, { token: evil, leaseId: evilLease }, stop.signal);
    const attacked = await peakRss(pid, honestLoop(base, honest, agent, honestLease, SECONDS));
    stop.abort();
    await running.done();

    const p95Alone = percentile(alone.result.latencies, 95);
    const p95Attacked = percentile(attacked.result.latencies, 95);
    fig('honest-p95-ms', p95Alone, 'ms');
    fig('honest-p95-under-attack-ms', p95Attacked, 'ms', 'honest-p95-ms', p95Attacked / p95Alone);
    fig('honest-snapshots-alone', alone.result.latencies.length, 'count');
    fig('honest-snapshots-under-attack', attacked.result.latencies.length, 'count');
    fig('honest-errors-under-attack', attacked.result.errors, 'count');
    fig('bridge-rss-peak-alone-mib', alone.peakMiB, 'MiB');
    fig(
      'bridge-rss-peak-under-attack-mib',
      attacked.peakMiB,
      'MiB',
      'bridge-rss-peak-alone-mib',
      attacked.peakMiB / alone.peakMiB,
    );
    for (const [key, n] of Object.entries(running.counts).sort()) fig(`attack-${key}`, n, 'count');
  } finally {
    agent.destroy();
    if (node) await stopBridge(node);
    await simulator.stop();
    await tmp.cleanup();
  }
  return figures;
}
