/**
 * A helper's artifact in an S3 store without presigned URLs (found by the container test, issue 12):
 * the compose fleet publishes to S3 (no S3_PRESIGN_SECONDS / S3_PUBLIC_BASE_URL, the default) and
 * `ensure` answered `404 no artifact with sha256 …` although the object was there: the bridge only
 * fetched its own artifacts through a download URL. It reads them from the store itself now, into
 * the cache, sha256-verified. Real s3rver on loopback.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactCache, S3ArtifactStore } from '../../src/artifacts/index.ts';
import { storedApk } from '../../src/helpers/apk-source.ts';
import { artifactKey } from '../../src/releases/layout.ts';
import { type S3TestServer, startS3Server } from './support/s3-server.ts';

describe('storedApk on an S3 store without download URLs (real s3rver)', () => {
  let s3: S3TestServer;
  let dir: string;
  let store: S3ArtifactStore;

  beforeAll(async () => {
    s3 = await startS3Server();
    dir = await mkdtemp(path.join(os.tmpdir(), 'devicebridge-s3-artifact-'));
    store = new S3ArtifactStore({
      bucket: s3.bucket,
      prefix: `t${randomBytes(4).toString('hex')}/`,
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      presignSeconds: 0,
    });
  });

  afterAll(async () => {
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the object from the store into the cache, verified', async () => {
    const bytes = randomBytes(100_000);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    await store.put(artifactKey(sha256), bytes);
    expect(await store.downloadUrl(artifactKey(sha256))).toBeNull();
    const cache = new ArtifactCache(path.join(dir, 'cache'));
    const file = await storedApk(cache, store, sha256);
    expect(file).not.toBeNull();
    expect((await readFile(file!)).equals(bytes)).toBe(true);
  });

  it('answers null for a missing object and refuses bytes that do not match their sha256', async () => {
    const cache = new ArtifactCache(path.join(dir, 'cache2'));
    expect(await storedApk(cache, store, 'a'.repeat(64))).toBeNull();
    const liar = 'b'.repeat(64);
    await store.put(artifactKey(liar), Buffer.from('not those bytes'));
    await expect(storedApk(cache, store, liar)).rejects.toMatchObject({ code: 'CHECKSUM_MISMATCH' });
    expect(await cache.has(liar)).toBe(false);
  });
});
