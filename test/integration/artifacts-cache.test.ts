import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ArtifactCache } from '../../src/artifacts/index.ts';
import { BridgeError } from '../../src/errors.ts';
import { waitFor } from '../support/wait-for.ts';

const body = randomBytes(300 * 1024 + 5);
const bodySha = createHash('sha256').update(body).digest('hex');

let dir: string;
let server: Server;
let base: string;
let hits: Map<string, number>;
let streamFinished: boolean;

function route(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
  switch (url.pathname) {
    case '/apk':
      res.writeHead(200, {
        'content-type': 'application/vnd.android.package-archive',
        'content-length': body.length,
      });
      res.end(body);
      return;
    case '/slow-apk':
      // Headers first, body later: gives concurrent callers time to pile up.
      res.writeHead(200, { 'content-length': body.length });
      setTimeout(() => res.end(body), 150);
      return;
    case '/big':
      res.writeHead(200, { 'content-length': 10 * 1024 * 1024 });
      res.write(Buffer.alloc(1024));
      return; // never finishes: the client must refuse on the header alone
    case '/endless': {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked, no length
      let sent = 0;
      const tick = setInterval(() => {
        if (res.destroyed) return clearInterval(tick);
        res.write(Buffer.alloc(64 * 1024, 1));
        sent += 64 * 1024;
        if (sent >= 8 * 1024 * 1024) {
          clearInterval(tick);
          streamFinished = true;
          res.end();
        }
      }, 2);
      res.on('close', () => clearInterval(tick));
      return;
    }
    case '/hang':
      res.writeHead(200, { 'content-length': body.length });
      return;
    default: {
      const status = /^\/status\/(\d{3})$/.exec(url.pathname)?.[1];
      res.writeHead(status === undefined ? 404 : Number(status), { 'content-type': 'text/plain' });
      res.end('no');
    }
  }
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'artifacts-cache-'));
  hits = new Map();
  streamFinished = false;
  server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

async function cacheFiles(cache: ArtifactCache): Promise<string[]> {
  try {
    return (await readdir(cache.dir)).sort();
  } catch {
    return [];
  }
}

async function rejection(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    return err as BridgeError;
  }
  throw new Error('expected a rejection');
}

describe('ArtifactCache.fetch', () => {
  it('downloads, verifies and stores under the sha256; the second fetch is served from the cache', async () => {
    const cache = new ArtifactCache(path.join(dir, 'cache', 'apk'));
    const progress: number[] = [];
    const first = await cache.fetch(`${base}/apk`, bodySha.toUpperCase(), {
      onProgress: (received) => progress.push(received),
    });
    expect(first).toEqual({
      path: path.join(cache.dir, bodySha),
      size: body.length,
      sha256: bodySha,
      cached: false,
    });
    expect((await readFile(first.path)).equals(body)).toBe(true);
    expect(progress.at(-1)).toBe(body.length);
    const second = await cache.fetch(`${base}/apk`, bodySha);
    expect(second.cached).toBe(true);
    expect(second.path).toBe(first.path);
    expect(hits.get('/apk')).toBe(1);
    expect(await cache.has(bodySha)).toBe(true);
    expect(await cacheFiles(cache)).toEqual([bodySha]);
  });

  it('8 concurrent fetches of one sha256 make one download', async () => {
    const cache = new ArtifactCache(dir);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        cache.fetch(`${base}/slow-apk`, bodySha, { signal: AbortSignal.timeout(10_000) }),
      ),
    );
    expect(hits.get('/slow-apk')).toBe(1);
    for (const r of results) {
      expect(r.sha256).toBe(bodySha);
      expect(r.size).toBe(body.length);
    }
    expect(await cacheFiles(cache)).toEqual([bodySha]);
  });

  it('a waiter that gives up does not break the shared download for the others', async () => {
    const cache = new ArtifactCache(dir);
    const quitter = cache.fetch(`${base}/slow-apk`, bodySha, { signal: AbortSignal.timeout(30) });
    const stayer = cache.fetch(`${base}/slow-apk`, bodySha);
    expect((await rejection(quitter)).code).toBe('TIMEOUT');
    const got = await stayer;
    expect(got.size).toBe(body.length);
    expect(hits.get('/slow-apk')).toBe(1);
  });

  it('a wrong sha256 is CHECKSUM_MISMATCH with expected/actual, no URL, and no file left', async () => {
    const cache = new ArtifactCache(dir);
    const wrong = 'ab'.repeat(32);
    const err = await rejection(cache.fetch(`${base}/apk?X-Amz-Signature=secret`, wrong));
    expect(err.code).toBe('CHECKSUM_MISMATCH');
    expect(err.details).toMatchObject({ expected: wrong, actual: bodySha });
    expect(JSON.stringify(err.toJSON())).not.toContain('secret');
    expect(JSON.stringify(err.toJSON())).not.toContain('127.0.0.1');
    expect(await cacheFiles(cache)).toEqual([]);
    expect(await cache.has(wrong)).toBe(false);
  });

  it('refuses from Content-Length alone when over maxBytes', async () => {
    const cache = new ArtifactCache(dir);
    const err = await rejection(cache.fetch(`${base}/big`, bodySha, { maxBytes: 1024 * 1024 }));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect(err.details).toMatchObject({ maxBytes: 1024 * 1024, contentLength: 10 * 1024 * 1024 });
    expect(await cacheFiles(cache)).toEqual([]);
  });

  it('aborts a chunked body without length once it passes maxBytes', async () => {
    const cache = new ArtifactCache(dir, { maxBytes: 512 * 1024 });
    const err = await rejection(cache.fetch(`${base}/endless`, bodySha));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect(err.details?.['receivedBytes']).toBeGreaterThan(512 * 1024);
    expect(streamFinished).toBe(false);
    expect(await cacheFiles(cache)).toEqual([]);
  });

  it('maps 404 to non-retryable UNAVAILABLE and 503/429 to retryable, naming the status', async () => {
    const cache = new ArtifactCache(dir);
    const notFound = await rejection(cache.fetch(`${base}/status/404`, bodySha));
    expect(notFound).toMatchObject({ code: 'UNAVAILABLE', retryable: false, details: { status: 404 } });
    expect(notFound.message).toContain('HTTP 404');
    const down = await rejection(cache.fetch(`${base}/status/503`, bodySha));
    expect(down).toMatchObject({ code: 'UNAVAILABLE', retryable: true, details: { status: 503 } });
    expect(down.message).toContain('HTTP 503');
    const throttled = await rejection(cache.fetch(`${base}/status/429`, bodySha));
    expect(throttled).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    expect(await cacheFiles(cache)).toEqual([]);
  });

  it('maps connection refused to retryable UNAVAILABLE and a timeout to TIMEOUT', async () => {
    const cache = new ArtifactCache(dir);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await rejection(cache.fetch(`http://127.0.0.1:${port}/x`, bodySha));
    expect(refused).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    const timeout = await rejection(
      cache.fetch(`${base}/hang`, bodySha, { signal: AbortSignal.timeout(200) }),
    );
    expect(timeout.code).toBe('TIMEOUT');
    expect(await cacheFiles(cache)).toEqual([]);
  });

  it('only fetches http(s) URLs and validates the sha256', async () => {
    const cache = new ArtifactCache(dir);
    expect((await rejection(cache.fetch('file:///etc/passwd', bodySha))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(cache.fetch('ftp://h/x', bodySha))).message).toContain('"ftp:"');
    expect((await rejection(cache.fetch('not a url', bodySha))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(cache.fetch(`${base}/apk`, 'abc'))).message).toContain('64 hexadecimal');
    expect(hits.size).toBe(0);
  });

  it('re-verifies a file it did not write: a corrupted cache entry is replaced by a fresh download', async () => {
    await writeFile(path.join(dir, bodySha), 'corrupted');
    const cache = new ArtifactCache(dir);
    const got = await cache.fetch(`${base}/apk`, bodySha);
    expect(got.cached).toBe(false);
    expect(hits.get('/apk')).toBe(1);
    expect((await readFile(got.path)).equals(body)).toBe(true);
    // A fresh instance trusts nothing it has not hashed, but a correct file is a hit.
    const again = await new ArtifactCache(dir).fetch(`${base}/apk`, bodySha);
    expect(again.cached).toBe(true);
    expect(hits.get('/apk')).toBe(1);
  });

  it('an expected size that differs is a CHECKSUM_MISMATCH', async () => {
    const cache = new ArtifactCache(dir);
    const err = await rejection(cache.fetch(`${base}/apk`, bodySha, { size: body.length + 1 }));
    expect(err).toMatchObject({ code: 'CHECKSUM_MISMATCH', details: { actualSize: body.length } });
  });
});

describe('ArtifactCache.importFile', () => {
  it('copies a bundled file in after verifying it; a wrong sha256 leaves nothing', async () => {
    const src = path.join(dir, 'bundled.apk');
    await writeFile(src, body);
    const cache = new ArtifactCache(path.join(dir, 'cache'));
    const wrong = await rejection(cache.importFile(src, 'cd'.repeat(32)));
    expect(wrong).toMatchObject({
      code: 'CHECKSUM_MISMATCH',
      details: { expected: 'cd'.repeat(32), actual: bodySha },
    });
    expect(await cacheFiles(cache)).toEqual([]);
    const imported = await cache.importFile(src, bodySha);
    expect(imported).toMatchObject({ sha256: bodySha, size: body.length, cached: false });
    expect((await readFile(imported.path)).equals(body)).toBe(true);
    expect((await cache.importFile(src, bodySha)).cached).toBe(true);
    expect((await rejection(cache.importFile(path.join(dir, 'missing'), 'ef'.repeat(32)))).code).toBe(
      'INVALID_ARGUMENT',
    );
  });
});

describe('ArtifactCache.importStream releases its source', () => {
  it('an abort rejects at once and destroys a stream that never yields; no temp file is left', async () => {
    const cache = new ArtifactCache(dir);
    let asked = false;
    const stream = new Readable({
      read() {
        asked = true; // never yields
      },
    });
    const controller = new AbortController();
    const importing = cache.importStream(bodySha, async () => ({ stream }), { signal: controller.signal });
    await waitFor(() => asked, { what: 'the copy to wait on the stream' });
    controller.abort();
    await expect(importing).rejects.toThrow();
    await vi.waitFor(() => expect(stream.destroyed).toBe(true), { timeout: 2_000 });
    await vi.waitFor(async () => expect(await cacheFiles(cache)).toEqual([]), { timeout: 2_000 });
  });

  it('a source whose size is over maxBytes is destroyed, not left open', async () => {
    const cache = new ArtifactCache(dir);
    const stream = new Readable({ read() {} });
    const err = await rejection(
      cache.importStream(bodySha, async () => ({ stream, size: 2048 }), { maxBytes: 1024 }),
    );
    expect(err.message).toMatch(/1024/);
    expect(stream.destroyed).toBe(true);
  });

  it('imports a stream that ends normally (its bytes verified)', async () => {
    const cache = new ArtifactCache(dir);
    const got = await cache.importStream(bodySha, async () => ({
      stream: Readable.from([body]),
      size: body.length,
    }));
    expect(got?.size).toBe(body.length);
    expect((await readFile(got!.path)).equals(body)).toBe(true);
  });
});
