/**
 * The per-node, content-addressed download cache for device-side artifacts (APKs, jars). Files live
 * at `<dir>/<sha256>`; they are only ever created by streaming into a temp file in the same
 * directory while hashing, verifying the sha256 and renaming into place, so a file under its final
 * name is complete and (at the time it was written) correct. The first hit on a file this process
 * did not write re-hashes it once; later hits check the size only.
 *
 * Concurrent requests for the same sha256 share one download or import. A caller's `signal` only
 * abandons that caller's wait; the shared download is aborted when every waiter has gone.
 * Errors never carry the URL (it may be presigned).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { BridgeError } from '../errors.ts';
import { sha256File } from './hash.ts';

export const DEFAULT_MAX_ARTIFACT_BYTES = 64 * 1024 * 1024;

export type ProgressListener = (receivedBytes: number, totalBytes: number | undefined) => void;

export interface CacheFetchOptions {
  signal?: AbortSignal;
  /** Size cap (default 64 MiB, or the cache's default): refused from Content-Length, aborted while streaming. */
  maxBytes?: number;
  onProgress?: ProgressListener;
  /** Expected size (e.g. the manifest's `sizeBytes`); a different size is a CHECKSUM_MISMATCH. */
  size?: number;
}

export interface CachedArtifact {
  path: string;
  size: number;
  /** Lower-case hex. */
  sha256: string;
  /** True when the file was already in the cache (no download or copy happened). */
  cached: boolean;
}

export interface ArtifactCacheOptions {
  /** Default size cap for `fetch` (64 MiB). */
  maxBytes?: number;
}

interface Shared {
  promise: Promise<CachedArtifact>;
  controller: AbortController;
  /** Waiters that can still abandon the operation; Infinity once one cannot (no signal). */
  waiters: number;
  listeners: Set<ProgressListener>;
}

const SHA256 = /^[0-9a-fA-F]{64}$/;

function errno(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;
}

function normalizeSha(sha256: string): string {
  if (typeof sha256 !== 'string' || !SHA256.test(sha256)) {
    throw new BridgeError('INVALID_ARGUMENT', 'sha256 must be 64 hexadecimal characters', {
      details: { field: 'sha256' },
    });
  }
  return sha256.toLowerCase();
}

function checkUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BridgeError('INVALID_ARGUMENT', 'artifact URL is not a valid absolute URL', {
      details: { field: 'url' },
    });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `artifact URL scheme ${JSON.stringify(parsed.protocol)} not allowed`,
      {
        details: { field: 'url', problem: 'only http: and https: URLs are fetched' },
      },
    );
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new BridgeError('INVALID_ARGUMENT', 'artifact URL must not embed credentials', {
      details: { field: 'url' },
    });
  }
}

function checkMaxBytes(maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new BridgeError('INVALID_ARGUMENT', 'maxBytes must be a positive integer', {
      details: { field: 'maxBytes' },
    });
  }
}

function tooLarge(maxBytes: number, size: number, source: 'content-length' | 'body'): BridgeError {
  return new BridgeError(
    'PAYLOAD_TOO_LARGE',
    source === 'content-length'
      ? `artifact is ${size} bytes, over the ${maxBytes}-byte limit`
      : `artifact exceeded the ${maxBytes}-byte limit while downloading`,
    {
      details: {
        maxBytes,
        ...(source === 'content-length' ? { contentLength: size } : { receivedBytes: size }),
      },
    },
  );
}

function abortError(reason: unknown): BridgeError {
  if (reason instanceof BridgeError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') {
    return new BridgeError('TIMEOUT', 'artifact download timed out', { cause: reason });
  }
  return new BridgeError('UNAVAILABLE', 'artifact download aborted', { cause: reason });
}

function statusError(status: number): BridgeError {
  const retryable = status >= 500 || status === 429 || status === 408;
  return new BridgeError('UNAVAILABLE', `artifact download failed: HTTP ${status}`, {
    retryable,
    details: { status },
  });
}

function networkError(err: unknown): BridgeError {
  if (err instanceof BridgeError) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  const code = errno(cause) ?? errno(err) ?? (err instanceof Error ? err.message : 'network error');
  return new BridgeError('UNAVAILABLE', `artifact download failed: ${code}`, { details: { reason: code } });
}

async function writeChunk(fh: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await fh.write(chunk, offset, chunk.length - offset);
    offset += bytesWritten;
  }
}

/**
 * Release a stream source: destroy it when it can be (a Node stream, an HTTP/S3 body), else end its
 * iterator. A pending read of a destroyed Node stream settles, so a copy waiting on it ends.
 */
function destroySource(stream: AsyncIterable<Uint8Array>): void {
  const destroyable = stream as { destroy?: (error?: Error) => void };
  if (typeof destroyable.destroy === 'function') {
    destroyable.destroy();
    return;
  }
  const iterator = stream as Partial<AsyncIterator<Uint8Array>>;
  void iterator.return?.()?.catch?.(() => undefined);
}

/** `importStream`'s source has no such object (never leaves the class). */
class MissingSource extends Error {}

export class ArtifactCache {
  readonly #dir: string;
  readonly #maxBytes: number;
  readonly #inflight = new Map<string, Shared>();
  /** sha256 → size of files this process wrote or verified. */
  readonly #verified = new Map<string, number>();

  constructor(dir: string, options: ArtifactCacheOptions = {}) {
    if (typeof dir !== 'string' || dir.length === 0) {
      throw new BridgeError('INVALID_ARGUMENT', 'artifact cache needs a directory');
    }
    this.#dir = path.resolve(dir);
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
    checkMaxBytes(this.#maxBytes);
  }

  get dir(): string {
    return this.#dir;
  }

  /** Where the artifact with this sha256 lives (whether or not it is present). */
  pathFor(sha256: string): string {
    return path.join(this.#dir, normalizeSha(sha256));
  }

  /** Whether a complete file for this sha256 is in the cache (not re-hashed). */
  async has(sha256: string): Promise<boolean> {
    try {
      return (await stat(this.pathFor(sha256))).isFile();
    } catch {
      return false;
    }
  }

  /** Download `url` into the cache unless `sha256` is already there; verify; return the cached file. */
  async fetch(url: string, sha256: string, options: CacheFetchOptions = {}): Promise<CachedArtifact> {
    const sha = normalizeSha(sha256);
    checkUrl(url);
    const maxBytes = options.maxBytes ?? this.#maxBytes;
    checkMaxBytes(maxBytes);
    if (options.signal?.aborted) throw abortError(options.signal.reason);
    const result = await this.#ensure(sha, options, (signal, progress) =>
      this.#download(url, sha, maxBytes, signal, progress),
    );
    return this.#checkResult(result, maxBytes, options.size);
  }

  /** Copy a local (bundled) artifact into the cache, verifying its sha256. */
  async importFile(
    filePath: string,
    sha256: string,
    options: CacheFetchOptions = {},
  ): Promise<CachedArtifact> {
    const sha = normalizeSha(sha256);
    const maxBytes = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
    checkMaxBytes(maxBytes);
    const result = await this.#ensure(sha, options, async (signal, progress) => {
      let size: number;
      try {
        const st = await stat(filePath);
        if (!st.isFile()) throw new Error('not a regular file');
        size = st.size;
      } catch (err) {
        throw new BridgeError(
          'INVALID_ARGUMENT',
          `cannot import ${filePath}: ${errno(err) ?? (err as Error).message}`,
          {
            cause: err,
          },
        );
      }
      if (size > maxBytes) throw tooLarge(maxBytes, size, 'content-length');
      try {
        return await this.#store(
          sha,
          createReadStream(filePath, { highWaterMark: 1 << 20, signal }) as AsyncIterable<Buffer>,
          maxBytes,
          size,
          progress,
        );
      } catch (err) {
        if (err instanceof BridgeError) throw err;
        if (signal.aborted) throw abortError(signal.reason);
        throw new BridgeError(
          'INTERNAL',
          `cannot import ${filePath}: ${errno(err) ?? (err as Error).message}`,
          {
            cause: err,
          },
        );
      }
    });
    return this.#checkResult(result, maxBytes, options.size);
  }

  /**
   * Copy an artifact from a stream (e.g. an artifact store's object) into the cache unless `sha256`
   * is already there, verifying it; `open` is called only when needed and answers null when the
   * source has no such object (then so does this).
   */
  async importStream(
    sha256: string,
    open: (signal: AbortSignal) => Promise<{ stream: AsyncIterable<Uint8Array>; size?: number } | null>,
    options: CacheFetchOptions = {},
  ): Promise<CachedArtifact | null> {
    const sha = normalizeSha(sha256);
    const maxBytes = options.maxBytes ?? this.#maxBytes;
    checkMaxBytes(maxBytes);
    let result: CachedArtifact;
    try {
      result = await this.#ensure(sha, options, async (signal, progress) => {
        const source = await open(signal);
        if (source === null) throw new MissingSource();
        // The source (e.g. an S3 body) is released on every way out: an abort, a refusal up front.
        const release = (): void => destroySource(source.stream);
        if (source.size !== undefined && source.size > maxBytes) {
          release();
          throw tooLarge(maxBytes, source.size, 'content-length');
        }
        if (signal.aborted) {
          release();
          throw abortError(signal.reason);
        }
        signal.addEventListener('abort', release, { once: true });
        try {
          return await this.#store(sha, source.stream, maxBytes, source.size, progress);
        } catch (err) {
          if (signal.aborted) throw abortError(signal.reason);
          throw err;
        } finally {
          signal.removeEventListener('abort', release);
        }
      });
    } catch (err) {
      if (err instanceof MissingSource) return null;
      throw err;
    }
    return this.#checkResult(result, maxBytes, options.size);
  }

  /** Remove an artifact from the cache (absent is fine). */
  async remove(sha256: string): Promise<void> {
    const file = this.pathFor(sha256);
    this.#verified.delete(normalizeSha(sha256));
    await unlink(file).catch((err: unknown) => {
      if (errno(err) !== 'ENOENT') throw err;
    });
  }

  /** Delete temp files older than `olderThanMs` left by a crashed process. Returns how many. */
  async sweepTemp(olderThanMs = 60 * 60 * 1000): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch {
      return 0;
    }
    let removed = 0;
    const cutoff = Date.now() - olderThanMs;
    for (const name of names) {
      if (!name.endsWith('~tmp')) continue;
      const file = path.join(this.#dir, name);
      try {
        if ((await stat(file)).mtimeMs <= cutoff) {
          await unlink(file);
          removed++;
        }
      } catch {
        // raced with its owner
      }
    }
    return removed;
  }

  #checkResult(result: CachedArtifact, maxBytes: number, expectedSize: number | undefined): CachedArtifact {
    if (result.size > maxBytes) throw tooLarge(maxBytes, result.size, 'content-length');
    if (expectedSize !== undefined && result.size !== expectedSize) {
      throw new BridgeError(
        'CHECKSUM_MISMATCH',
        `artifact is ${result.size} bytes, expected ${expectedSize}`,
        {
          details: { sha256: result.sha256, expectedSize, actualSize: result.size },
        },
      );
    }
    return result;
  }

  /** Join or start the one operation for `sha` (cache lookup, then `produce` when absent). */
  async #ensure(
    sha: string,
    options: CacheFetchOptions,
    produce: (signal: AbortSignal, progress: ProgressListener) => Promise<CachedArtifact>,
  ): Promise<CachedArtifact> {
    const known = this.#verified.get(sha);
    if (known !== undefined) {
      const file = path.join(this.#dir, sha);
      const st = await stat(file).catch(() => null);
      if (st?.isFile() && st.size === known) return { path: file, size: known, sha256: sha, cached: true };
      this.#verified.delete(sha);
    }
    let shared = this.#inflight.get(sha);
    if (shared === undefined) {
      const controller = new AbortController();
      const listeners = new Set<ProgressListener>();
      const progress: ProgressListener = (received, total) => {
        for (const listener of listeners) listener(received, total);
      };
      const promise = (async () => {
        const hit = await this.#lookup(sha);
        return hit ?? (await produce(controller.signal, progress));
      })();
      const created: Shared = { promise, controller, waiters: 0, listeners };
      shared = created;
      this.#inflight.set(sha, created);
      const done = () => {
        if (this.#inflight.get(sha) === created) this.#inflight.delete(sha);
      };
      promise.then(done, done);
    }
    return this.#wait(shared, options);
  }

  #wait(shared: Shared, options: CacheFetchOptions): Promise<CachedArtifact> {
    const { signal, onProgress } = options;
    if (onProgress !== undefined) shared.listeners.add(onProgress);
    const detach = () => {
      if (onProgress !== undefined) shared.listeners.delete(onProgress);
    };
    if (signal === undefined) {
      shared.waiters = Number.POSITIVE_INFINITY;
      return shared.promise.finally(detach);
    }
    shared.waiters++;
    return new Promise<CachedArtifact>((resolve, reject) => {
      const onAbort = () => {
        detach();
        shared.waiters--;
        if (shared.waiters <= 0) shared.controller.abort(signal.reason);
        reject(abortError(signal.reason));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      shared.promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          detach();
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          detach();
          reject(err);
        },
      );
    });
  }

  /** A present file: trusted if this process verified it, else re-hashed once (a bad file is deleted). */
  async #lookup(sha: string): Promise<CachedArtifact | null> {
    const file = path.join(this.#dir, sha);
    let size: number;
    try {
      const st = await stat(file);
      if (!st.isFile()) return null;
      size = st.size;
    } catch {
      return null;
    }
    if (this.#verified.get(sha) !== size) {
      const digest = await sha256File(file).catch(() => null);
      if (digest === null || digest.sha256 !== sha) {
        await unlink(file).catch(() => undefined);
        return null;
      }
      size = digest.size;
      this.#verified.set(sha, size);
    }
    return { path: file, size, sha256: sha, cached: true };
  }

  async #download(
    url: string,
    sha: string,
    maxBytes: number,
    signal: AbortSignal,
    progress: ProgressListener,
  ): Promise<CachedArtifact> {
    let response: Response;
    try {
      response = await fetch(url, {
        signal,
        redirect: 'follow',
        headers: { accept: 'application/octet-stream, */*', 'accept-encoding': 'identity' },
      });
    } catch (err) {
      throw signal.aborted ? abortError(signal.reason) : networkError(err);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw statusError(response.status);
    }
    const lengthHeader = response.headers.get('content-length');
    const length = lengthHeader === null || !/^\d+$/.test(lengthHeader) ? undefined : Number(lengthHeader);
    if (length !== undefined && length > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(maxBytes, length, 'content-length');
    }
    const body = (response.body ?? []) as AsyncIterable<Uint8Array>;
    try {
      return await this.#store(sha, body, maxBytes, length, progress);
    } catch (err) {
      if (signal.aborted) throw abortError(signal.reason);
      throw networkError(err);
    }
  }

  /** Stream `chunks` to a temp file while hashing and counting; verify; rename into place. */
  async #store(
    sha: string,
    chunks: AsyncIterable<Uint8Array>,
    maxBytes: number,
    total: number | undefined,
    progress: ProgressListener,
  ): Promise<CachedArtifact> {
    await mkdir(this.#dir, { recursive: true });
    const tmp = path.join(this.#dir, `.${sha}.${randomBytes(6).toString('hex')}~tmp`);
    const fh = await open(tmp, 'wx', 0o644);
    let closed = false;
    let renamed = false;
    try {
      const hash = createHash('sha256');
      let received = 0;
      progress(0, total);
      for await (const chunk of chunks) {
        received += chunk.length;
        // Leaving the loop cancels the body (the iterator's return() is called).
        if (received > maxBytes) throw tooLarge(maxBytes, received, 'body');
        hash.update(chunk);
        await writeChunk(fh, chunk);
        progress(received, total);
      }
      await fh.sync();
      await fh.close();
      closed = true;
      const actual = hash.digest('hex');
      if (actual !== sha) {
        throw new BridgeError('CHECKSUM_MISMATCH', 'artifact sha256 does not match the expected value', {
          details: { expected: sha, actual, size: received },
        });
      }
      const file = path.join(this.#dir, sha);
      await rename(tmp, file);
      renamed = true;
      this.#verified.set(sha, received);
      return { path: file, size: received, sha256: sha, cached: false };
    } finally {
      if (!closed) await fh.close().catch(() => undefined);
      if (!renamed) await unlink(tmp).catch(() => undefined);
    }
  }
}
