/** Run the real `devicebridge` CLI (src/cli/bin.js) in a child process. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './ports.ts';

export const BIN = path.resolve(import.meta.dirname, '../../src/cli/bin.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Bytes for stdin; without it stdin is closed at once. */
  input?: string | Buffer;
  /** SIGKILL the process after this long (default 30 s). */
  timeoutMs?: number;
}

/** Run any command to completion and collect its output (killed after `timeoutMs`). */
export function runProcess(command: string, args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A command may exit without reading its input: the unread rest is an EPIPE on our side of the
    // pipe, not a failure of the command (its exit status says how it went).
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/**
 * The environment of a CLI run: the caller's, with the bridge's private adb server on a port that
 * was free when asked unless the caller chose one — never the default 5137, where `npm start`
 * beside the tests runs its own.
 */
async function cliEnv(
  env: Record<string, string | undefined> = {},
): Promise<Record<string, string | undefined>> {
  if (env['DEVICEBRIDGE_ADB_PORT'] !== undefined) return env;
  return { ...env, DEVICEBRIDGE_ADB_PORT: String(await freePort()) };
}

/** Run the CLI to completion. */
export async function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return runProcess(process.execPath, [BIN, ...args], { ...options, env: await cliEnv(options.env) });
}

/** Start a long-running CLI command and wait for its first stdout line. */
export async function startCli(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<{ child: ChildProcess; firstLine: string; stderr: () => string }> {
  const env = await cliEnv(options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out waiting for ${args.join(' ')}: ${err}`));
    }, options.timeoutMs ?? 30_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve({ child, firstLine: out.slice(0, nl), stderr: () => err });
      }
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing: ${err}`));
    });
  });
}

export function waitForExit(child: ChildProcess, timeoutMs = 15_000): Promise<number | null> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => reject(new Error('process did not exit')), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** `devicebridge release publish` of the snapshot-helper fixture (v2) into a `file:` data dir. */
export async function publishFixtureHelper(dataDir: string): Promise<void> {
  const apk = new URL('../fixtures/apk/snapshot-helper-v2.apk', import.meta.url).pathname;
  const res = await runCli([
    'release',
    'publish',
    '--apk',
    apk,
    '--version',
    '0.2.0',
    '--store',
    `file:${dataDir}`,
  ]);
  if (res.code !== 0) throw new Error(`publishing the fixture helper failed (${res.code}): ${res.stderr}`);
}
