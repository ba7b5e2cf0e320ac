/**
 * Concurrent publishers in separate `devicebridge release publish` processes, against the
 * filesystem store and against a real S3-compatible server that honours conditional writes (moto,
 * see support/moto-server.ts). Every round races two versions (0.1.0, 0.2.0), each published by
 * three processes (two byte variants of the APK, one of them twice). After the dust settles:
 * - exactly one variant per version was published and every other racer of that version either
 *   saw its own bytes (unchanged, exit 0) or was refused (CONFLICT, exit 1);
 * - each version's `<asset>.sha256` file names the sha256 of the manifest that won;
 * - `latest` names the highest version.
 * The racers are held at a start gate (support/start-gate.mjs) after loading the CLI's modules, so
 * they really publish at the same moment instead of one start-up apart.
 */
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openArtifactStore } from '../../src/artifacts/open-store.ts';
import type { ArtifactStore } from '../../src/artifacts/store.ts';
import { checksumKey, latestKey, manifestKey } from '../../src/releases/layout.ts';
import { type MotoS3Server, startMotoServer } from '../integration/support/moto-server.ts';
import { fixture, tempDir } from '../support/bridge.ts';
import { BIN, type CliResult, runProcess } from '../support/cli.ts';

const GATE = path.resolve(import.meta.dirname, '../support/start-gate.mjs');
const NAME = 'android-snapshot-helper';
const RACERS: Array<{ apk: string; version: string }> = [
  { apk: 'snapshot-helper-v1.apk', version: '0.1.0' },
  { apk: 'snapshot-helper-v1-rebuilt.apk', version: '0.1.0' },
  { apk: 'snapshot-helper-v2.apk', version: '0.2.0' },
  { apk: 'snapshot-helper-v2-keyb.apk', version: '0.2.0' },
  { apk: 'snapshot-helper-v1.apk', version: '0.1.0' },
  { apk: 'snapshot-helper-v2.apk', version: '0.2.0' },
];
const ROUNDS = 1;

interface RacerResult {
  version: string;
  code: number | null;
  out: { ok: boolean; status?: string; manifest?: { sha256: string }; error?: { code: string } } | null;
  stderr: string;
}

function racer(args: string[], env: Record<string, string>): Promise<CliResult> {
  return runProcess(process.execPath, ['--import', GATE, BIN, ...args], {
    env: { LOG_LEVEL: 'silent', ...env },
    timeoutMs: 60_000,
  });
}

async function race(storeArg: string, env: Record<string, string>, gateDir: string): Promise<RacerResult[]> {
  const gate = path.join(gateDir, `gate-${randomBytes(4).toString('hex')}`);

  const running = RACERS.map(async ({ apk, version }) => {
    const res = await racer(
      ['release', 'publish', '--apk', fixture(apk), '--version', version, '--store', storeArg, '--json'],
      { ...env, DEVICEBRIDGE_TEST_GATE: gate },
    );
    let out: RacerResult['out'] = null;
    try {
      out = JSON.parse(res.stdout) as RacerResult['out'];
    } catch {
      out = null;
    }
    return { version, code: res.code, out, stderr: res.stderr };
  });
  // Open the gate once every racer has loaded the CLI and is waiting at it.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const ready = (await readdir(gateDir)).filter((f) => f.startsWith(`${path.basename(gate)}.ready-`));
    if (ready.length === RACERS.length) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  await writeFile(gate, '');
  return Promise.all(running);
}

async function checkStore(store: ArtifactStore, results: RacerResult[]): Promise<void> {
  for (const version of ['0.1.0', '0.2.0']) {
    const raw = await store.get(manifestKey(NAME, version));
    expect(raw, `manifest of ${version}`).not.toBeNull();
    const manifest = JSON.parse(raw!.toString('utf8')) as {
      sha256: string;
      assetName: string;
      checksumName: string;
    };
    const checksum = await store.get(checksumKey(NAME, version, manifest.checksumName));
    expect(checksum?.toString('utf8'), `checksum file of ${version}`).toBe(
      `${manifest.sha256}  ${manifest.assetName}\n`,
    );
    const mine = results.filter((r) => r.version === version);
    for (const r of mine) {
      if (r.code === 0) {
        expect(r.out?.manifest?.sha256, r.stderr).toBe(manifest.sha256);
      } else {
        expect(r.code, r.stderr).toBe(1);
        expect(r.out?.error?.code, r.stderr).toBe('CONFLICT');
      }
    }
    expect(mine.filter((r) => r.out?.status === 'published')).toHaveLength(1);
  }
  const latest = await store.get(latestKey(NAME));
  expect(JSON.parse(latest!.toString('utf8'))).toEqual({ version: '0.2.0' });
}

describe('racing release publish processes', () => {
  let moto: MotoS3Server;
  let tmp: { dir: string; cleanup(): Promise<void> };

  beforeAll(async () => {
    tmp = await tempDir();
    moto = await startMotoServer();
  });
  afterAll(async () => {
    await moto?.stop();
    await tmp?.cleanup();
  });

  it('filesystem store: the manifest is the commit point and latest only moves forwards', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dataDir = path.join(tmp.dir, `fs-${round}`);
      const results = await race(`file:${dataDir}`, {}, tmp.dir);
      const store = openArtifactStore(`file:${path.join(dataDir, 'artifacts')}`);
      await checkStore(store, results);
    }
  }, 120_000);

  it('S3 store (conditional writes): the manifest is the commit point and latest only moves forwards', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const bucket = await moto.createBucket();
      const results = await race(`s3://${bucket}/releases`, moto.env(), tmp.dir);
      const store = openArtifactStore(`s3://${bucket}/releases`, {
        s3Endpoint: moto.endpoint,
        s3Region: moto.region,
        s3ForcePathStyle: true,
        s3Credentials: { accessKeyId: moto.accessKeyId, secretAccessKey: moto.secretAccessKey },
      });
      try {
        await checkStore(store, results);
      } finally {
        await store.close();
      }
    }
  }, 120_000);
});
