/** Runs the release/ scripts for android/ (build, JVM tests) as child processes. */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type CliResult, runProcess } from './cli.ts';

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

export type RunResult = CliResult;

/** A release/ script or tool, run from the repository root (killed after 150 s by default). */
export function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {},
): Promise<RunResult> {
  return runProcess(command, args, { cwd: ROOT, timeoutMs: 150_000, ...options });
}

/** `release/build-android.sh OUTDIR`; throws with its stderr when it fails. */
export async function buildAndroid(outDir: string, env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  // About 20 s on an idle 2-core machine; far more when the machine is shared by parallel suites.
  const result = await run('bash', [path.join(ROOT, 'release/build-android.sh'), outDir], {
    env,
    timeoutMs: 420_000,
  });
  if (result.code !== 0) throw new Error(`build-android.sh failed (${result.code}): ${result.stderr}`);
  return result;
}

/** Every file under android/ and release/, hashed with its path: the build's whole input. */
async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile())
        hash
          .update(path.relative(ROOT, full))
          .update('\0')
          .update(await readFile(full));
    }
  };
  await walk(path.join(ROOT, 'android'));
  await walk(path.join(ROOT, 'release'));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The artifacts of the current android/ and release/ sources, built once and shared by the test
 * files of a run (and later runs while the sources are unchanged) under .tools/test-build/<hash>.
 * Returns the output directory.
 */
export async function builtAndroid(): Promise<string> {
  const dir = path.join(ROOT, '.tools/test-build', await sourceHash());
  if (existsSync(path.join(dir, '.complete'))) return dir;
  const staging = await mkdtemp(path.join(ROOT, '.tools/test-build-'));
  try {
    await buildAndroid(staging);
    await writeFile(path.join(staging, '.complete'), '');
    await mkdir(path.dirname(dir), { recursive: true });
    // Another test file may have finished the same build first: either copy is the same bytes.
    await rename(staging, dir).catch(() => rm(staging, { recursive: true, force: true }));
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return dir;
}
