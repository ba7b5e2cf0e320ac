/**
 * Publishing's commit protocol on the filesystem store, in process: the manifest is the commit
 * point, the checksum file and `latest` are derived from the manifest that won, and a publisher of
 * the same bytes completes a release whose first publisher stopped right after the commit point.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { checksumKey, latestKey, manifestKey } from '../../src/releases/layout.ts';
import { publishRelease } from '../../src/releases/publish.ts';
import { ReleaseRepository } from '../../src/releases/repository.ts';
import { fixture, tempDir } from '../support/bridge.ts';

const NAME = 'android-snapshot-helper';
let tmp: { dir: string; cleanup(): Promise<void> };
let store: FsArtifactStore;

beforeEach(async () => {
  tmp = await tempDir();
  store = new FsArtifactStore(path.join(tmp.dir, 'artifacts'));
});
afterEach(async () => {
  await store.close();
  await tmp.cleanup();
});

describe('publish commit protocol', () => {
  it('concurrent publishers in one process: one winner per version, matching checksums, latest is the highest', async () => {
    const racers = [
      ['snapshot-helper-v1.apk', '0.1.0'],
      ['snapshot-helper-v2.apk', '0.2.0'],
      ['snapshot-helper-v1-rebuilt.apk', '0.1.0'],
      ['snapshot-helper-v2-keyb.apk', '0.2.0'],
      ['snapshot-helper-v1.apk', '0.1.0'],
      ['snapshot-helper-v2.apk', '0.2.0'],
    ] as const;
    const results = await Promise.allSettled(
      racers.map(([apk, version]) => publishRelease(store, { apkPath: fixture(apk), version })),
    );
    const repo = new ReleaseRepository(store);
    for (const version of ['0.1.0', '0.2.0']) {
      const manifest = await repo.getManifest(NAME, version);
      expect(manifest).not.toBeNull();
      const checksum = await store.get(checksumKey(NAME, version, manifest!.checksumName!));
      expect(checksum?.toString()).toBe(`${manifest!.sha256}  ${manifest!.assetName}\n`);
      const mine = results.filter((_, i) => racers[i]![1] === version);
      expect(mine.filter((r) => r.status === 'fulfilled' && r.value.status === 'published')).toHaveLength(1);
      for (const r of mine) {
        if (r.status === 'fulfilled') expect(r.value.manifest.sha256).toBe(manifest!.sha256);
        else expect(r.reason).toMatchObject({ code: 'CONFLICT' });
      }
    }
    expect(await repo.getLatestVersion(NAME)).toBe('0.2.0');
    // Only the releases' own keys and the winners' blobs are visible; no lock or temp file is.
    const keys = await store.list('helpers/');
    expect(keys.every((k) => !k.includes('~'))).toBe(true);
  });

  it('stored manifests and pointers are read back through the strict JSON parser', async () => {
    const first = await publishRelease(store, {
      apkPath: fixture('snapshot-helper-v2.apk'),
      version: '0.2.0',
    });
    const text = JSON.stringify(first.manifest);
    await store.put(manifestKey(NAME, '0.2.0'), `${text.slice(0, -1)},"sha256":"${'0'.repeat(64)}"}`);
    const repo = new ReleaseRepository(store);
    await expect(repo.getManifest(NAME, '0.2.0')).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringMatching(/duplicate key "sha256"/),
    });
    await store.put(latestKey(NAME), '{"version":"0.2.0","__proto__":{}}');
    await expect(repo.getLatestVersion(NAME)).rejects.toMatchObject({ code: 'INTERNAL' });
  });

  it('publishing the same bytes again completes a release that stopped after its manifest was written', async () => {
    const first = await publishRelease(store, {
      apkPath: fixture('snapshot-helper-v2.apk'),
      version: '0.2.0',
    });
    expect(first).toMatchObject({ status: 'published', latest: true });
    // A publisher that died right after the commit point: manifest present, checksum and latest not.
    await store.delete(checksumKey(NAME, '0.2.0', first.manifest.checksumName!));
    await store.delete(latestKey(NAME));
    const again = await publishRelease(store, {
      apkPath: fixture('snapshot-helper-v2.apk'),
      version: '0.2.0',
    });
    expect(again).toMatchObject({ status: 'unchanged', latest: true });
    expect((await store.get(checksumKey(NAME, '0.2.0', first.manifest.checksumName!)))?.toString()).toBe(
      `${first.manifest.sha256}  ${first.manifest.assetName}\n`,
    );
    expect(JSON.parse((await store.get(latestKey(NAME)))!.toString())).toEqual({ version: '0.2.0' });
    // An older version published later neither moves latest back nor claims it.
    const older = await publishRelease(store, {
      apkPath: fixture('snapshot-helper-v1.apk'),
      version: '0.1.0',
    });
    expect(older).toMatchObject({ status: 'published', latest: false });
    expect(JSON.parse((await store.get(latestKey(NAME)))!.toString())).toEqual({ version: '0.2.0' });
    expect(await store.get(manifestKey(NAME, '0.1.0'))).not.toBeNull();
  });
});
