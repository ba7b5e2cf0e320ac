/**
 * A private, real adb server for integration tests: `adb -P PORT server nodaemon` on a port that was
 * free when asked (`freePort`; never the user's 5037 or the bridge's 5137), with its own HOME so its adbkey stays in a temp dir. Killed by
 * `stop()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TcpAdbServerConnector } from '../../../src/adb/connector.ts';
import { pingAdbServer } from '../../../src/adb/server.ts';
import { freePort } from '../../support/ports.ts';

export interface AdbResult {
  stdout: Buffer;
  stderr: string;
  /** Exit status; -1 when the command was killed after `timeoutMs`. */
  code: number;
}

export interface AdbRunOptions {
  /** Bytes for adb's stdin; without it stdin is /dev/null. */
  input?: Buffer;
  /** Kill adb after this long (default 30 s). */
  timeoutMs?: number;
}

export type AdbDeviceState = 'device' | 'offline' | 'unauthorized' | 'connecting' | 'authorizing' | string;

export interface AdbServer {
  port: number;
  /** Environment for spawning adb against this server (HOME, ANDROID_ADB_SERVER_PORT). */
  env: NodeJS.ProcessEnv;
  adb(args: string[], opts?: AdbRunOptions): Promise<AdbResult>;
  /** `adb connect ADDRESS`, then wait until `adb devices` lists it as `state` (default `device`). */
  connect(address: string, state?: AdbDeviceState, timeoutMs?: number): Promise<void>;
  /** `adb devices` as serial → state. */
  devices(): Promise<Map<string, AdbDeviceState>>;
  /** Wait until `serial` shows `state` (`absent` = not listed). */
  waitForState(serial: string, state: AdbDeviceState | 'absent', timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const ADB = process.env['ADB'] ?? 'adb';

/** Servers not stopped yet: killed when the test process exits without `stop()` (crash, timeout). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True when an adb server answers `host:version` on `port`. */
export function answers(port: number): Promise<boolean> {
  return pingAdbServer(new TcpAdbServerConnector({ port }), 1000).then(
    () => true,
    () => false,
  );
}

function run(args: string[], env: NodeJS.ProcessEnv, opts: AdbRunOptions = {}): Promise<AdbResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(ADB, args, {
      env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 30_000);
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(out),
        stderr:
          Buffer.concat(err).toString('utf8') +
          (timedOut ? `\n[killed after ${opts.timeoutMs ?? 30_000} ms]` : ''),
        code: timedOut ? -1 : (code ?? -1),
      });
    });
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => {});
      child.stdin!.end(opts.input);
    }
  });
}

function parseDevices(text: string): Map<string, AdbDeviceState> {
  const out = new Map<string, AdbDeviceState>();
  for (const line of text.split('\n')) {
    const match = /^(\S+)\s+(\S+)/.exec(line.trim());
    if (match === null || line.startsWith('List of devices') || line.startsWith('*')) continue;
    out.set(match[1]!, match[2]!);
  }
  return out;
}

async function spawnServer(port: number, env: NodeJS.ProcessEnv): Promise<ChildProcess | undefined> {
  const child = spawn(ADB, ['-P', String(port), 'server', 'nodaemon'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let exited = false;
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.on('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (exited) return undefined; // most likely the port was taken: try another
    if (await answers(port)) {
      live.add(child);
      child.once('exit', () => live.delete(child));
      return child;
    }
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`adb server on port ${port} did not answer within 15 s: ${stderr}`);
}

export async function startAdbServer(): Promise<AdbServer> {
  const home = await mkdtemp(join(tmpdir(), 'devicebridge-adb-home-'));
  for (let attempt = 0; attempt < 8; attempt++) {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, ANDROID_ADB_SERVER_PORT: String(port) };
    delete env['ADB_VENDOR_KEYS'];
    delete env['ANDROID_SERIAL'];
    const child = await spawnServer(port, env);
    if (child === undefined) continue;
    const adb = (args: string[], opts?: AdbRunOptions): Promise<AdbResult> =>
      run(['-P', String(port), ...args], env, opts);
    const devices = async (): Promise<Map<string, AdbDeviceState>> =>
      parseDevices((await adb(['devices'], { timeoutMs: 10_000 })).stdout.toString('utf8'));
    const waitForState = async (
      serial: string,
      state: AdbDeviceState | 'absent',
      timeoutMs = 10_000,
    ): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      let last: string | undefined;
      for (;;) {
        last = (await devices()).get(serial);
        if (state === 'absent' ? last === undefined : last === state) return;
        if (Date.now() > deadline) {
          throw new Error(
            `${serial} did not become ${state} within ${timeoutMs} ms (last: ${last ?? 'absent'})`,
          );
        }
        await sleep(50);
      }
    };
    let stopped: Promise<void> | undefined;
    return {
      port,
      env,
      adb,
      devices,
      waitForState,
      async connect(address, state = 'device', timeoutMs = 10_000) {
        const result = await adb(['connect', address], { timeoutMs });
        const text = result.stdout.toString('utf8');
        // `failed to authenticate` is what an unauthorized device looks like; only `device` must connect.
        if (result.code !== 0 || (state === 'device' && /failed|unable|cannot/i.test(text))) {
          throw new Error(`adb connect ${address} failed: ${text}${result.stderr}`);
        }
        await waitForState(address, state, timeoutMs);
      },
      stop() {
        stopped ??= (async () => {
          await run(['-P', String(port), 'kill-server'], env, { timeoutMs: 5000 }).catch(() => undefined);
          if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
            const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
            await exited;
            clearTimeout(timer);
          }
          await rm(home, { recursive: true, force: true });
        })();
        return stopped;
      },
    };
  }
  await rm(home, { recursive: true, force: true });
  throw new Error('could not start a private adb server on a free port');
}
