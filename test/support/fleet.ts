/**
 * Fleet tests: real `devicebridge serve` processes (optionally on one Redis key prefix), and a JSON
 * HTTP call that says how long it took.
 */
import { startCli, waitForExit } from './cli.ts';
import { freePortCandidate } from './device-bed.ts';

export interface ServeNode {
  name: string;
  url: string;
  adbPort: number;
  dataDir: string;
  child: Awaited<ReturnType<typeof startCli>>['child'];
  stderr(): string;
}

export interface ServeNodeOptions {
  dataDir: string;
  name: string;
  simulate: number;
  /** Leases and devices in this Redis (with `prefix`); memory when absent. */
  redisUrl?: string;
  prefix?: string;
  env?: Record<string, string>;
}

/** Start `devicebridge serve --port 0 --json` and wait for its listening line. */
export async function startServeNode(options: ServeNodeOptions): Promise<ServeNode> {
  const adbPort = freePortCandidate();
  const started = await startCli(
    ['serve', '--port', '0', '--data-dir', options.dataDir, '--simulate', String(options.simulate), '--json'],
    {
      env: {
        ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
        ...(options.prefix ? { DEVICEBRIDGE_REDIS_PREFIX: options.prefix } : {}),
        DEVICEBRIDGE_NODE: options.name,
        DEVICEBRIDGE_ADB_PORT: String(adbPort),
        LOG_LEVEL: 'silent',
        ...options.env,
      },
      timeoutMs: 60_000,
    },
  );
  return {
    name: options.name,
    url: (JSON.parse(started.firstLine) as { url: string }).url,
    adbPort,
    dataDir: options.dataDir,
    child: started.child,
    stderr: started.stderr,
  };
}

/** SIGTERM and wait (SIGKILL when it does not exit in time); resolves the exit code. */
export async function stopServeNode(node: ServeNode, timeoutMs = 20_000): Promise<number | null> {
  if (node.child.exitCode !== null) return node.child.exitCode;
  node.child.kill('SIGTERM');
  return waitForExit(node.child, timeoutMs).catch(() => {
    node.child.kill('SIGKILL');
    return null;
  });
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
