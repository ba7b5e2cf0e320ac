/**
 * S3ArtifactStore against a real S3-compatible server (s3rver on loopback). s3rver verifies SigV4
 * signatures, presigned signatures and presigned expiry, which these tests rely on; it ignores
 * `If-None-Match: *` on PUT, so only the sequential putIfAbsent contract is checked here.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ArtifactCache,
  openArtifactStore,
  S3ArtifactStore,
  type S3ArtifactStoreOptions,
} from '../../src/artifacts/index.ts';
import { BridgeError } from '../../src/errors.ts';
import { type S3TestServer, startS3Server } from './support/s3-server.ts';

let s3: S3TestServer;
let dir: string;
let prefix: string;
const stores: S3ArtifactStore[] = [];

function makeStore(overrides: Partial<S3ArtifactStoreOptions> = {}): S3ArtifactStore {
  const store = new S3ArtifactStore({
    bucket: s3.bucket,
    prefix,
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    presignSeconds: 300,
    multipartThresholdBytes: 5 * 1024 * 1024,
    partSizeBytes: 5 * 1024 * 1024,
    ...overrides,
  });
  stores.push(store);
  return store;
}

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  s3 = await startS3Server();
});

afterAll(async () => {
  await s3?.stop();
});

beforeEach(async () => {
  prefix = `t-${randomBytes(4).toString('hex')}/`;
  dir = await mkdtemp(path.join(os.tmpdir(), 'artifacts-s3-'));
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('S3ArtifactStore', () => {
  it('describes itself without credentials', () => {
    const store = makeStore();
    expect(store.kind).toBe('s3');
    expect(store.description).toBe(`s3://${s3.bucket}/${prefix}`);
    expect(store.description).not.toContain(s3.secretAccessKey);
  });

  it('put/get/stat/list/delete under the prefix', async () => {
    const store = makeStore();
    const info = await store.put('helpers/h/latest.json', '{"version":"1.0.0"}', {
      contentType: 'application/json',
    });
    expect(info).toMatchObject({ key: 'helpers/h/latest.json', size: 19, contentType: 'application/json' });
    expect(info.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await store.get('helpers/h/latest.json'))?.toString()).toBe('{"version":"1.0.0"}');
    expect(await store.stat('helpers/h/latest.json')).toMatchObject({ size: 19, etag: info.etag });
    expect(await store.get('absent')).toBeNull();
    expect(await store.stat('absent')).toBeNull();
    expect(await store.openRead('absent')).toBeNull();

    await store.put('helpers/h/versions/1.0.0/manifest.json', 'm1');
    await store.put('helpers/hb/latest.json', 'x');
    await store.put('artifacts/aa', 'a');
    expect(await store.list('')).toEqual([
      'artifacts/aa',
      'helpers/h/latest.json',
      'helpers/h/versions/1.0.0/manifest.json',
      'helpers/hb/latest.json',
    ]);
    expect(await store.list('helpers/h/')).toEqual([
      'helpers/h/latest.json',
      'helpers/h/versions/1.0.0/manifest.json',
    ]);
    // Another prefix sees nothing of ours.
    expect(await makeStore({ prefix: 'other' }).list('')).toEqual([]);

    await store.delete('artifacts/aa');
    await store.delete('artifacts/aa');
    expect(await store.get('artifacts/aa')).toBeNull();
    expect(s3.requests.some((r) => r.includes(`${prefix}artifacts/aa`))).toBe(true);
  });

  it('lists past one page (marker pagination)', async () => {
    const store = makeStore({ listPageSize: 4 });
    const keys = Array.from({ length: 11 }, (_, i) => `k/${String(i).padStart(2, '0')}`);
    await Promise.all(keys.map((k) => store.put(k, '')));
    const before = s3.requests.length;
    expect(await store.list('k/')).toEqual(keys);
    expect(
      s3.requests.slice(before).filter((r) => r.startsWith('GET') && r.includes('max-keys=4')),
    ).toHaveLength(3);
  });

  it('uploads a file above the threshold as multipart with progress, byte-exact', async () => {
    const store = makeStore();
    const file = path.join(dir, 'big.apk');
    const bytes = randomBytes(11 * 1024 * 1024 + 123);
    await writeFile(file, bytes);
    const progress: number[] = [];
    const before = s3.requests.length;
    const info = await store.putFile('artifacts/big', file, {
      contentType: 'application/vnd.android.package-archive',
      onProgress: (sent, total) => {
        expect(total).toBe(bytes.length);
        progress.push(sent);
      },
    });
    expect(info.size).toBe(bytes.length);
    const requests = s3.requests.slice(before);
    expect(requests.filter((r) => r.startsWith('POST') && r.includes('?uploads'))).toHaveLength(1);
    expect(requests.filter((r) => r.startsWith('PUT') && r.includes('partNumber='))).toHaveLength(3);
    expect(requests.filter((r) => r.startsWith('POST') && r.includes('uploadId='))).toHaveLength(1);
    expect(progress.at(-1)).toBe(bytes.length);
    expect(progress.some((p) => p > 0 && p < bytes.length)).toBe(true);
    const got = await store.get('artifacts/big');
    expect(sha(got!)).toBe(sha(bytes));
  });

  it('uploads a file below the threshold with one PUT', async () => {
    const store = makeStore();
    const file = path.join(dir, 'small.apk');
    const bytes = randomBytes(200 * 1024);
    await writeFile(file, bytes);
    const before = s3.requests.length;
    const info = await store.putFile('artifacts/small', file);
    const requests = s3.requests.slice(before);
    expect(requests.filter((r) => r.startsWith('PUT'))).toHaveLength(1);
    expect(requests.some((r) => r.includes('uploads'))).toBe(false);
    expect(info.size).toBe(bytes.length);
    expect((await store.get('artifacts/small'))?.equals(bytes)).toBe(true);
  });

  it('serves inclusive byte ranges with the whole-object size', async () => {
    const store = makeStore();
    await store.put('r', '0123456789');
    const part = await store.openRead('r', { start: 3, end: 6 });
    expect(part?.range).toEqual({ start: 3, end: 6 });
    expect(part?.info.size).toBe(10);
    expect((await readAll(part!.stream)).toString()).toBe('3456');
    const tail = await store.openRead('r', { start: 8, end: 99 });
    expect(tail?.range).toEqual({ start: 8, end: 9 });
    expect((await readAll(tail!.stream)).toString()).toBe('89');
    const whole = await store.openRead('r');
    expect(whole?.range).toBeUndefined();
    expect((await readAll(whole!.stream)).toString()).toBe('0123456789');
    await expect(store.openRead('r', { start: 10, end: 20 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { reason: 'RANGE_NOT_SATISFIABLE', size: 10 },
    });
    await expect(store.openRead('r', { start: 5, end: 2 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('putIfAbsent creates once and writes nothing when the key exists', async () => {
    const store = makeStore();
    expect(await store.putIfAbsent('helpers/h/versions/1.0.0/manifest.json', 'first')).toBe(true);
    const before = s3.requests.length;
    expect(await store.putIfAbsent('helpers/h/versions/1.0.0/manifest.json', 'second')).toBe(false);
    expect(s3.requests.slice(before).filter((r) => r.startsWith('PUT'))).toEqual([]);
    expect((await store.get('helpers/h/versions/1.0.0/manifest.json'))?.toString()).toBe('first');
  });

  it('presigned URLs download the exact bytes; unknown-key and expired URLs are refused', async () => {
    const store = makeStore();
    const bytes = randomBytes(70 * 1024);
    await store.put('artifacts/p', bytes);
    const url = await store.downloadUrl('artifacts/p');
    expect(url).toMatch(/X-Amz-Signature=/);
    expect(url).toContain('X-Amz-Expires=300');
    const ok = await fetch(url!);
    expect(ok.status).toBe(200);
    expect(Buffer.from(await ok.arrayBuffer()).equals(bytes)).toBe(true);

    // s3rver checks the access key and the expiry of presigned URLs but does not verify SigV4
    // signatures themselves, so a garbled signature cannot be tested against it; an unknown key can.
    const unknownKey = url!.replace(/X-Amz-Credential=S3RVER/, 'X-Amz-Credential=NOPE');
    expect(unknownKey).not.toBe(url);
    const refused = await fetch(unknownKey);
    expect(refused.status).toBe(403);
    await refused.arrayBuffer();

    const shortLived = makeStore({ presignSeconds: 1 });
    const expiring = await shortLived.downloadUrl('artifacts/p');
    // Valid until its second runs out, then refused as expired (the test's timeout bounds the wait).
    let expired = await fetch(expiring!);
    while (expired.status === 200) {
      await expired.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expired = await fetch(expiring!);
    }
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('expired');
  });

  it('downloadUrl: public base URL wins, and presignSeconds 0 without one means null', async () => {
    const pub = makeStore({ publicBaseUrl: 'https://cdn.example.com/apk/' });
    expect(await pub.downloadUrl('artifacts/a+b@c')).toBe(
      `https://cdn.example.com/apk/${prefix}artifacts/a%2Bb%40c`,
    );
    expect(await makeStore({ presignSeconds: 0 }).downloadUrl('artifacts/x')).toBeNull();
    await expect(pub.downloadUrl('../x')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('ArtifactCache fetching a presigned URL verifies the sha256 (mismatch → CHECKSUM_MISMATCH, no URL leaked)', async () => {
    const store = makeStore();
    const bytes = randomBytes(90 * 1024);
    await store.put(`artifacts/${sha(bytes)}`, bytes);
    const url = (await store.downloadUrl(`artifacts/${sha(bytes)}`))!;
    const cache = new ArtifactCache(path.join(dir, 'cache'));
    const wrong = 'f'.repeat(64);
    let caught: unknown;
    try {
      await cache.fetch(url, wrong);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BridgeError);
    const err = caught as BridgeError;
    expect(err.code).toBe('CHECKSUM_MISMATCH');
    expect(err.details).toMatchObject({ expected: wrong, actual: sha(bytes) });
    expect(`${err.message}${JSON.stringify(err.toJSON())}`).not.toMatch(/X-Amz|127\.0\.0\.1/);
    expect(await cache.has(wrong)).toBe(false);
    const good = await cache.fetch(url, sha(bytes));
    expect(good).toMatchObject({ size: bytes.length, cached: false });
  });

  it('maps bad credentials to PERMISSION_DENIED without leaking the secret', async () => {
    const store = makeStore({ credentials: { accessKeyId: 'NOPE', secretAccessKey: 'very-secret-value' } });
    let caught: unknown;
    try {
      await store.put('k', 'v');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BridgeError);
    expect((caught as BridgeError).code).toBe('PERMISSION_DENIED');
    expect(JSON.stringify((caught as BridgeError).toJSON())).not.toContain('very-secret-value');
  });

  it('maps an unreachable endpoint to retryable UNAVAILABLE', async () => {
    const store = makeStore({ endpoint: 'http://127.0.0.1:1' });
    await expect(store.stat('k')).rejects.toMatchObject({ code: 'UNAVAILABLE', retryable: true });
  });

  it('a server that accepts and never answers fails the call as UNAVAILABLE after the idle timeout (no hang)', async () => {
    // A real TCP peer that reads the request and stays silent (a wedged store or proxy).
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => {
      held.push(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const store = makeStore({ endpoint: `http://127.0.0.1:${port}`, idleTimeoutMs: 300 });
      // Three SDK attempts of 300 ms each plus its backoff: seconds; a hang runs into the test's timeout.
      const caught = await store.stat('k').catch((err: unknown) => err);
      expect(caught).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
      expect((caught as Error).message).toMatch(/S3 stat .* failed/);
      expect(held.length).toBeGreaterThan(0);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 20_000);

  it('a connection the server never accepts fails after the connect timeout (SYNs dropped: accept queue full)', async () => {
    // A listener with a backlog of 0 that never accepts: once its queue is full the kernel drops
    // further SYNs, so a connect neither succeeds nor is refused.
    const script =
      'import socket,sys,time\ns=socket.socket();s.bind(("127.0.0.1",0));s.listen(0)\n' +
      'print(s.getsockname()[1],flush=True)\ntime.sleep(60)';
    const child = spawn('python3', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const fillers: net.Socket[] = [];
    try {
      const port = Number(
        await new Promise<string>((resolve) =>
          child.stdout.once('data', (d: Buffer) => resolve(d.toString())),
        ),
      );
      // Fill the accept queue (backlog 0 holds one finished handshake; a few more to be sure).
      for (let i = 0; i < 4; i++) {
        const filler = net.connect(port, '127.0.0.1');
        filler.on('error', () => undefined);
        fillers.push(filler);
      }
      // The queue is full once a handshake finished in it.
      await Promise.any(fillers.map((filler) => once(filler, 'connect')));
      const store = makeStore({
        endpoint: `http://127.0.0.1:${port}`,
        connectTimeoutMs: 300,
        idleTimeoutMs: 60_000,
      });
      // Without the connect timeout the kernel's SYN retries (minutes) run into the test's timeout.
      const caught = await store.stat('k').catch((err: unknown) => err);
      expect(caught).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    } finally {
      for (const filler of fillers) filler.destroy();
      child.kill('SIGKILL');
    }
  }, 20_000);

  it('openArtifactStore builds an S3 store from a spec and config-shaped options', async () => {
    const store = openArtifactStore(`s3://${s3.bucket}/${prefix}spec`, {
      s3Endpoint: s3.endpoint,
      s3Region: s3.region,
      s3ForcePathStyle: true,
      s3PresignSeconds: 60,
      s3Credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    try {
      expect(store.kind).toBe('s3');
      expect(store.description).toBe(`s3://${s3.bucket}/${prefix}spec/`);
      await store.put('a', 'via spec');
      expect((await makeStore().get('spec/a'))?.toString()).toBe('via spec');
      expect(await store.downloadUrl('a')).toContain('X-Amz-Expires=60');
    } finally {
      await store.close();
    }
  });

  it('rejects invalid construction options with named problems', () => {
    expect(() => makeStore({ bucket: 'Bad_Bucket' })).toThrow(/bucket/);
    expect(() => makeStore({ partSizeBytes: 1024 })).toThrow(/partSizeBytes/);
    expect(() => makeStore({ presignSeconds: 700000 })).toThrow(/presignSeconds/);
    expect(() => makeStore({ publicBaseUrl: 'https://u:p@cdn.example.com' })).toThrow(/credentials/);
    expect(() => makeStore({ prefix: 'a/../b' })).toThrow(/'\.\.'/);
    expect(() => makeStore({ connectTimeoutMs: 0 })).toThrow(/connectTimeoutMs/);
    expect(() => makeStore({ idleTimeoutMs: -1 })).toThrow(/idleTimeoutMs/);
  });
});
