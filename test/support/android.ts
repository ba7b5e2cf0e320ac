/** Runs the release/ scripts for android/ (build, JVM tests) as child processes. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const ANDROID_VERSION = readFileSync(path.join(ROOT, 'android/VERSION'), 'utf8').trim();
/** android/VERSION x.y.z → x*1,000,000 + y*1,000 + z (seed 000's release script rule). */
export const ANDROID_VERSION_CODE = ANDROID_VERSION.split('.')
  .map(Number)
  .reduce((code, part) => code * 1000 + part, 0);
/**
 * SHA-256 of the committed android/debug.keystore certificate. Pinned: a rotated key would make
 * `adb install -r` refuse every update of an installed helper.
 */
export const DEBUG_CERT_SHA256 = 'c19a4e4d35aa232020c7de756d707cf2cc7eadf639e3c22957bf3b5566a9251e';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 150_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `release/build-android.sh OUTDIR`; throws with its stderr when it fails. */
export async function buildAndroid(outDir: string, env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  const result = await run('bash', [path.join(ROOT, 'release/build-android.sh'), outDir], { env });
  if (result.code !== 0) throw new Error(`build-android.sh failed (${result.code}): ${result.stderr}`);
  return result;
}
