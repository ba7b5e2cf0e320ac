/**
 * The stores' compare-and-swap (`putIfMatch` + `getVersioned`), which `latest` moves with: against
 * the filesystem store and against a real S3-compatible server that enforces conditional writes
 * (moto; s3rver ignores If-Match / If-None-Match). Concurrent increments of one counter must lose
 * no update; a stale ETag must write nothing.
 */
import { mkdir, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { openArtifactStore } from '../../src/artifacts/open-store.ts';
import type { ArtifactStore } from '../../src/artifacts/store.ts';
import { tempDir } from '../support/bridge.ts';
import { type MotoS3Server, startMotoServer } from './support/moto-server.ts';

const WORKERS = 8;
const INCREMENTS = 3;

async function increment(store: ArtifactStore, key: string): Promise<number> {
  for (let attempts = 1; ; attempts++) {
    const current = await store.getVersioned(key);
    const next = current === null ? 1 : Number(current.body.toString('utf8')) + 1;
    if ((await store.putIfMatch(key, String(next), current?.etag ?? null)) !== null) return attempts;
    if (attempts > 500) throw new Error('no progress');
  }
}

function casContract(name: string, open: () => Promise<ArtifactStore>) {
  describe(`${name}: putIfMatch`, () => {
    let store: ArtifactStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('creates only when absent, swaps only on the current ETag, and writes nothing otherwise', async () => {
      const created = await store.putIfMatch('cas/a.json', 'one', null);
      expect(created).not.toBeNull();
      expect(await store.putIfMatch('cas/a.json', 'two', null)).toBeNull();
      const v1 = await store.getVersioned('cas/a.json');
      expect(v1?.body.toString()).toBe('one');
      expect(v1?.etag).toBe(created!.etag);
      expect(await store.putIfMatch('cas/a.json', 'stale', '"0123456789abcdef"')).toBeNull();
      const swapped = await store.putIfMatch('cas/a.json', 'two', v1!.etag);
      expect(swapped).not.toBeNull();
      expect(await store.putIfMatch('cas/a.json', 'three', v1!.etag)).toBeNull();
      expect((await store.get('cas/a.json'))?.toString()).toBe('two');
      expect(await store.putIfMatch('cas/missing.json', 'x', swapped!.etag)).toBeNull();
      expect(await store.get('cas/missing.json')).toBeNull();
      expect(await store.list('cas/')).toEqual(['cas/a.json']);
    });

    it(`${WORKERS} concurrent writers × ${INCREMENTS} increments lose no update`, async () => {
      const key = `cas/counter-${Math.random().toString(36).slice(2)}`;
      const attempts = await Promise.all(
        Array.from({ length: WORKERS }, async () => {
          let total = 0;
          for (let i = 0; i < INCREMENTS; i++) total += await increment(store, key);
          return total;
        }),
      );
      expect(Number((await store.get(key))?.toString())).toBe(WORKERS * INCREMENTS);
      // The writers really collided (some swaps were refused and retried).
      expect(attempts.reduce((a, b) => a + b, 0)).toBeGreaterThan(WORKERS * INCREMENTS);
    }, 60_000);
  });
}

let tmp: { dir: string; cleanup(): Promise<void> };
let moto: MotoS3Server;
beforeAll(async () => {
  tmp = await tempDir();
  moto = await startMotoServer();
});
afterAll(async () => {
  await moto?.stop();
  await tmp?.cleanup();
});

casContract('filesystem store', async () => new FsArtifactStore(path.join(tmp.dir, 'fs')));
casContract('S3 store (moto)', async () => {
  const bucket = await moto.createBucket();
  return openArtifactStore(`s3://${bucket}/p`, {
    s3Endpoint: moto.endpoint,
    s3Region: moto.region,
    s3ForcePathStyle: true,
    s3Credentials: { accessKeyId: moto.accessKeyId, secretAccessKey: moto.secretAccessKey },
  });
});

describe('filesystem store: lock files', () => {
  it('breaks a lock left by a crashed writer once it is stale, and waits on a fresh one', async () => {
    const store = new FsArtifactStore(path.join(tmp.dir, 'locks'));
    await store.put('helpers/x/latest.json', 'v1');
    const lock = path.join(tmp.dir, 'locks', 'helpers', 'x', '.~lock-latest.json');
    await mkdir(path.dirname(lock), { recursive: true });
    await writeFile(lock, '999999 crashed\n');
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    const current = await store.getVersioned('helpers/x/latest.json');
    expect(await store.putIfMatch('helpers/x/latest.json', 'v2', current!.etag)).not.toBeNull();
    expect((await store.get('helpers/x/latest.json'))?.toString()).toBe('v2');
    // The lock is released after the swap and never listed as a key.
    expect(await store.list('helpers/')).toEqual(['helpers/x/latest.json']);

    // A fresh lock held by a live writer makes the swap wait for it: it resolves only after the
    // lock is released.
    await writeFile(lock, `${process.pid} live\n`);
    const v2 = await store.getVersioned('helpers/x/latest.json');
    const swap = store
      .putIfMatch('helpers/x/latest.json', 'v3', v2!.etag)
      .then((r) => ({ r, at: Date.now() }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await unlink(lock);
    const releasedAt = Date.now();
    const { r, at } = await swap;
    expect(r).not.toBeNull();
    expect(at).toBeGreaterThanOrEqual(releasedAt);
    expect((await store.get('helpers/x/latest.json'))?.toString()).toBe('v3');
  });
});
