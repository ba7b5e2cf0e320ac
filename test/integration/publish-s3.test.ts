/**
 * Publishing to the S3 store (s3rver on loopback, never a mocked client) and serving from it: the
 * manifest's apkUrl is a presigned URL the consumer downloads directly from S3.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactCache } from '../../src/artifacts/cache.ts';
import { openArtifactStore } from '../../src/artifacts/open-store.ts';
import type { ArtifactStore } from '../../src/artifacts/store.ts';
import { Authenticator } from '../../src/auth/tokens.ts';
import { loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { publishRelease } from '../../src/releases/publish.ts';
import { createApp } from '../../src/server/app.ts';
import { buildServices } from '../../src/server/services.ts';
import { fixture, tempDir } from '../support/bridge.ts';
import { type S3TestServer, startS3Server } from './support/s3-server.ts';

describe('publishing to and serving from S3', () => {
  let s3: S3TestServer;
  let store: ArtifactStore;
  let tmp: { dir: string; cleanup(): Promise<void> };

  beforeAll(async () => {
    s3 = await startS3Server();
    tmp = await tempDir();
    store = openArtifactStore(`s3://${s3.bucket}/releases`, {
      s3Endpoint: s3.endpoint,
      s3Region: s3.region,
      s3ForcePathStyle: true,
      s3PresignSeconds: 300,
      s3Credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
  });
  afterAll(async () => {
    await store.close();
    await s3.stop();
    await tmp.cleanup();
  });

  it('publishes, serves a presigned apkUrl, and the bytes verify by sha256', async () => {
    const apk = fixture('snapshot-helper-v1.apk');
    const sha = createHash('sha256')
      .update(await readFile(apk))
      .digest('hex');
    const published = await publishRelease(store, { apkPath: apk, version: '0.1.0' });
    expect(published.status).toBe('published');
    expect(published.manifest.sha256).toBe(sha);
    expect(s3.requests.some((r) => r.startsWith(`PUT /${s3.bucket}/releases/blobs/${sha}`))).toBe(true);

    const config = loadConfig(
      {
        DEVICEBRIDGE_DATA_DIR: tmp.dir,
        S3_BUCKET: s3.bucket,
        S3_PRESIGN_SECONDS: '300',
        LOG_LEVEL: 'silent',
      },
      {},
    );
    const app = createApp(
      buildServices(config, {
        store,
        auth: new Authenticator([]),
        logger: silentLogger(),
        metrics: createMetrics(),
      }),
    );
    const res = await app.request('/v1/helpers/android-snapshot-helper/manifest');
    expect(res.status).toBe(200);
    const manifest = (await res.json()) as { apkUrl: string; sha256: string };
    const url = new URL(manifest.apkUrl);
    expect(url.origin).toBe(s3.endpoint);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
    // The same presigned URL is reused while fresh, so the ETag is stable.
    const again = await app.request('/v1/helpers/android-snapshot-helper/manifest', {
      headers: { 'If-None-Match': res.headers.get('etag')! },
    });
    expect(again.status).toBe(304);

    // The device-side cache downloads it straight from S3 and verifies it.
    const cache = new ArtifactCache(`${tmp.dir}/cache`);
    const got = await cache.fetch(manifest.apkUrl, manifest.sha256);
    expect(got.sha256).toBe(sha);
    await expect(cache.fetch(manifest.apkUrl, 'f'.repeat(64))).rejects.toMatchObject({
      code: 'CHECKSUM_MISMATCH',
    });

    // The bridge also streams it from S3 at /v1/artifacts/{sha256}, with ranges.
    const proxied = await app.request(`/v1/artifacts/${sha}`, { headers: { Range: 'bytes=0-1' } });
    expect(proxied.status).toBe(206);
    expect(Buffer.from(await proxied.arrayBuffer()).toString('latin1')).toBe('PK');
  });

  it('refuses different bytes for the same version and keeps the first', async () => {
    await expect(
      publishRelease(store, { apkPath: fixture('snapshot-helper-v1-rebuilt.apk'), version: '0.1.0' }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    const again = await publishRelease(store, {
      apkPath: fixture('snapshot-helper-v1.apk'),
      version: '0.1.0',
    });
    expect(again.status).toBe('unchanged');
  });
});
