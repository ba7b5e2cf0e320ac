/**
 * Fleet tests: real `devicebridge serve` processes (on one Redis key prefix, or in memory), the
 * simulator in its own process, and JSON HTTP calls that say how long they took.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';
import { BIN, startCli, waitForExit } from './cli.ts';
import { freePort } from './device-bed.ts';

export const REDIS_URL = 'redis://127.0.0.1:6379';
const ex = promisify(execFile);

export interface ServeNode {
  /** The configured node name (unset: the data dir's identity). */
  name: string | undefined;
  url: string;
  adbPort: number;
  dataDir: string;
  child: Awaited<ReturnType<typeof startCli>>['child'];
  stderr(): string;
}
export type FleetNode = ServeNode;

export interface ServeNodeOptions {
  dataDir: string;
  /** DEVICEBRIDGE_NODE; unset = the data dir's persisted identity. */
  name?: string;
  simulate?: number;
  /** Leases and devices in this Redis (with `prefix`); null = the memory stores. */
  redisUrl?: string | null;
  prefix?: string;
  env?: Record<string, string>;
  /** Options for node itself (before the script), e.g. `--cpu-prof`. */
  nodeArgs?: string[];
}

/** Start `devicebridge serve --port 0 --json` and wait for its listening line. */
export async function startServeNode(options: ServeNodeOptions): Promise<ServeNode> {
  const redisUrl = options.redisUrl === undefined ? REDIS_URL : options.redisUrl;
  for (let attempt = 1; ; attempt++) {
    const adbPort = await freePort();
    const started = await startCli(
      [
        'serve',
        '--port',
        '0',
        '--data-dir',
        options.dataDir,
        '--simulate',
        String(options.simulate ?? 0),
        '--json',
      ],
      {
        env: {
          ...(redisUrl === null ? {} : { REDIS_URL: redisUrl }),
          ...(options.prefix === undefined ? {} : { DEVICEBRIDGE_REDIS_PREFIX: options.prefix }),
          ...(options.name === undefined ? {} : { DEVICEBRIDGE_NODE: options.name }),
          DEVICEBRIDGE_ADB_PORT: String(adbPort),
          LOG_LEVEL: 'silent',
          ...options.env,
        },
        timeoutMs: 60_000,
        ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
      },
    );
    const line = JSON.parse(started.firstLine) as { url: string; deviceError?: string };
    // The adb port was free when asked; something may have taken it before adb bound it (its
    // server then fails naming the port): start again on a new port.
    if (
      attempt < 5 &&
      options.env?.['DEVICEBRIDGE_ADB_PORT'] === undefined &&
      line.deviceError?.includes(`127.0.0.1:${adbPort}`)
    ) {
      started.child.kill('SIGKILL');
      await waitForExit(started.child).catch(() => undefined);
      continue;
    }
    return {
      name: options.name,
      url: line.url,
      adbPort: Number(options.env?.['DEVICEBRIDGE_ADB_PORT'] ?? adbPort),
      dataDir: options.dataDir,
      child: started.child,
      stderr: started.stderr,
    };
  }
}

/** The node's completed device health passes (`devicebridge_device_health_passes_total`). */
export async function healthPasses(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const count = /^devicebridge_device_health_passes_total (\d+)$/m.exec(text);
  if (!count) throw new Error(`no health-pass counter in ${url}/metrics`);
  return Number(count[1]);
}

/**
 * The sum of a counter or gauge in the node's /metrics over the series whose labels include every
 * one of `labels` (0 when no series matches yet: a labelled counter appears on its first increment).
 */
export async function metricSum(
  url: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const series = match[2] ?? '';
    if (wanted.every((pair) => series.split(/,(?=[a-zA-Z_]+=")/).includes(pair))) sum += Number(match[3]);
  }
  return sum;
}

/**
 * Resolves once the node completed `n` more health passes than when called: at least `n - 1` of
 * them started after the call, so each had its chance to act on what the test did before it (what a
 * check that "nothing happens" waits for, instead of a guessed time).
 */
export async function afterHealthPasses(url: string, n: number): Promise<void> {
  const target = (await healthPasses(url)) + n;
  // Polls a counter only the passes move; the test's own timeout bounds it.
  while ((await healthPasses(url)) < target) await new Promise((r) => setTimeout(r, 50));
}

/** `serve --json` on a data dir sharing the Redis prefix (the multi-node tests' short form). */
export function startBridge(
  dir: string,
  options: { prefix: string; name?: string; simulate?: number; env?: Record<string, string> },
): Promise<ServeNode> {
  return startServeNode({ dataDir: dir, ...options });
}

/** SIGTERM and wait (SIGKILL when it does not exit in time); resolves the exit code. */
export async function stopServeNode(node: ServeNode, timeoutMs = 20_000): Promise<number | null> {
  if (node.child.exitCode !== null) return node.child.exitCode;
  if (node.child.signalCode !== null) return null;
  node.child.kill('SIGTERM');
  return waitForExit(node.child, timeoutMs).catch(() => {
    node.child.kill('SIGKILL');
    return null;
  });
}

/** End a bridge and the adb server it started (a SIGKILLed bridge leaves it). */
export async function stopBridge(node: ServeNode): Promise<void> {
  await stopServeNode(node);
  await killAdbServer(node.adbPort);
}

export async function killAdbServer(port: number): Promise<void> {
  await ex('adb', ['-P', String(port), 'kill-server']).catch(() => undefined);
}

/** `adb forward --list` of a bridge's adb server. */
export async function forwardsOf(node: ServeNode): Promise<string> {
  return (await ex('adb', ['-P', String(node.adbPort), 'forward', '--list'])).stdout.trim();
}

export interface JsonAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
  json: any;
  /** Milliseconds from sending to the whole body read. */
  ms: number;
  /** When the answer was complete (performance.now()). */
  at: number;
}

/** One JSON call (30 s budget unless told). */
export async function httpJson(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<JsonAnswer> {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  const at = performance.now();
  return { status: res.status, json: text ? JSON.parse(text) : null, ms: at - started, at };
}

/** One JSON call with a bearer token (60 s bound): the status and the parsed body (null when empty). */
export async function bearerJson(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** One JSON call to a bridge (30 s bound). */
export const http = (url: string, method: string, path: string, body?: unknown): Promise<JsonAnswer> =>
  httpJson(url, method, path, body);

/** Remove every key of a test's Redis prefix. */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
}

/**
 * A fleet test's afterAll: stop the bridges (in order), then the simulator; delete the prefix's
 * keys, close `redis`, remove the temp dir. Parts never started are skipped.
 */
export async function stopFleet(parts: {
  nodes: readonly ServeNode[];
  simulator?: { stop(): Promise<void> } | undefined;
  redis: Redis;
  prefix: string;
  tmp?: { cleanup(): Promise<void> } | undefined;
}): Promise<void> {
  for (const n of parts.nodes) await stopBridge(n);
  await parts.simulator?.stop();
  await deleteKeys(parts.redis, parts.prefix);
  await parts.redis.quit();
  await parts.tmp?.cleanup();
}

/** `devicebridge simulate --port 0 --count N --json` in its own process (with its control API). */
export async function startSimulatorProcess(
  count: number,
  /** More `simulate` flags (e.g. `['--nodes', '20000']`, `['--log-rate', '20000']`). */
  extraArgs: readonly string[] = [],
): Promise<{
  child: ChildProcess;
  addresses: string[];
  /** The run-time control API (`src/simulator/control.ts`). */
  control: string;
  /** Write a devices file (`DEVICEBRIDGE_DEVICES_FILE`) naming every device here; answers `file`. */
  writeDevicesFile(file: string): Promise<string>;
  stop(): Promise<void>;
}> {
  const child = spawn(
    process.execPath,
    [BIN, 'simulate', '--port', '0', '--count', String(count), '--control-port', '0', '--json', ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const listed = await new Promise<{ control: string; addresses: string[] }>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`simulate did not list ${count} devices: ${err}`));
    }, 30_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { address?: string; control?: string });
      const addresses = lines.flatMap((l) => (l.address === undefined ? [] : [l.address]));
      const control = lines.find((l) => l.control !== undefined)?.control;
      if (addresses.length >= count && control !== undefined) {
        clearTimeout(timer);
        resolve({ control, addresses: addresses.slice(0, count) });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`simulate exited with ${code}: ${err}`));
    });
  });
  return {
    child,
    ...listed,
    async writeDevicesFile(file: string) {
      await writeFile(file, JSON.stringify(listed.addresses.map((endpoint) => ({ endpoint }))));
      return file;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await waitForExit(child, 10_000).catch(() => child.kill('SIGKILL'));
    },
  };
}

/** The simulator's status of its device at `address` (control API): helpers running, listeners. */
export interface SimulatedDeviceStatus {
  index: number;
  address: string;
  runningHelpers: number;
  listeners: string[];
  faults: string[];
}

export async function simulatedDevice(control: string, address: string): Promise<SimulatedDeviceStatus> {
  const { devices } = (await http(control, 'GET', '/devices')).json as { devices: SimulatedDeviceStatus[] };
  const device = devices.find((d) => d.address === address);
  if (device === undefined) throw new Error(`the simulator has no device at ${address}`);
  return device;
}
