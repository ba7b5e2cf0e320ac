/**
 * Memory of concurrent APK uploads, `npm run bench -- upload-memory`: a bridge node in its own
 * process (support/upload-node.ts: filesystem store, upload gate opened wide) receives
 * BENCH_UPLOADS (default 16) concurrent release publishes (`POST /v1/helpers/{name}/releases`, raw
 * APK body) of one BENCH_UPLOAD_MB (default 60) MiB APK: the snapshot-helper fixture with a large
 * stored entry added by the system `zip`. Each upload is streamed to disk, hashed, its APK metadata
 * read and the artifact stored.
 * Figures: the node's peak RSS growth over the run (VmHWM after minus VmRSS before, MiB) and its
 * ratio to one upload's size and to all uploads' bytes together; every answer must be 201/200.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, createReadStream, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { tempDir } from '../support/bridge.ts';
import type { BenchFigure } from './run.ts';

const UPLOADS = Number(process.env['BENCH_UPLOADS'] ?? 16);
const MB = Number(process.env['BENCH_UPLOAD_MB'] ?? 60);
const NODE = new URL('./support/upload-node.ts', import.meta.url).pathname;
const ROOT = new URL('../../', import.meta.url).pathname;
const FIXTURE = new URL('../fixtures/apk/snapshot-helper-v2.apk', import.meta.url).pathname;

/** `VmRSS` / `VmHWM` of a process, in MiB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** The fixture APK plus a stored entry of `mb` MiB of random bytes (incompressible, as real assets). */
export function paddedApk(dir: string, mb: number): string {
  const apk = path.join(dir, `padded-${mb}.apk`);
  copyFileSync(FIXTURE, apk);
  const pad = path.join(dir, 'assets-pad.bin');
  execFileSync('sh', ['-c', `head -c ${mb * 1024 * 1024} /dev/urandom > "$1"`, 'sh', pad]);
  execFileSync('zip', ['-q', '-0', '-j', apk, pad]);
  return apk;
}

function upload(url: string, file: string, size: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/helpers/android-snapshot-helper/releases?version=0.2.0`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/vnd.android.package-archive', 'content-length': size },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

export async function bench(): Promise<BenchFigure[]> {
  const { dir, cleanup } = await tempDir();
  const child = spawn(process.execPath, ['--import', 'tsx', NODE, path.join(dir, 'data')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const apk = paddedApk(dir, MB);
    const size = statSync(apk).size;
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`upload node exited ${code}`)));
    });
    const { url } = JSON.parse(first) as { url: string };
    // Warm-up: one upload (routes, store, parsers loaded), then the figure starts from here.
    const warm = await upload(url, apk, size);
    if (warm !== 201 && warm !== 200) throw new Error(`warm-up upload answered ${warm}`);
    const before = memoryOf(child.pid!);
    // VmHWM cannot be reset from outside; the warm-up's peak is below the concurrent run's.
    const statuses = await Promise.all(Array.from({ length: UPLOADS }, () => upload(url, apk, size)));
    const bad = statuses.filter((s) => s !== 200 && s !== 201);
    if (bad.length > 0) throw new Error(`uploads answered ${bad.join(', ')}`);
    const after = memoryOf(child.pid!);
    const growth = after.peak - before.rss;
    const sizeMiB = size / 1024 / 1024;
    return [
      {
        bench: `upload-memory-${UPLOADS}x${MB}MiB-peak-rss-growth`,
        value: Math.round(growth * 10) / 10,
        unit: 'MiB',
        baseline: 'one-upload-size',
        ratio: Math.round((growth / sizeMiB) * 100) / 100,
      },
      {
        bench: `upload-memory-${UPLOADS}x${MB}MiB-peak-rss-growth-vs-all-bytes`,
        value: Math.round(growth * 10) / 10,
        unit: 'MiB',
        baseline: 'all-uploads-bytes',
        ratio: Math.round((growth / (sizeMiB * UPLOADS)) * 1000) / 1000,
      },
      {
        bench: `upload-memory-${UPLOADS}x${MB}MiB-peak-rss`,
        value: Math.round(after.peak),
        unit: 'MiB',
        baseline: 'rss-before',
        ratio: Math.round((after.peak / before.rss) * 100) / 100,
      },
    ];
  } finally {
    child.kill('SIGKILL');
    await cleanup();
  }
}
