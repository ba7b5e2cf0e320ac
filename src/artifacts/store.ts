/**
 * The artifact store: a generic object store keyed by validated, slash-separated keys. The release
 * layout (`artifacts/<sha256>`, `helpers/<name>/versions/<version>/manifest.json`, …) lives above it.
 * Implementations: `FsArtifactStore` (default, under a directory) and `S3ArtifactStore`.
 */

import { describeValue } from '../describe-value.ts';
import { BridgeError } from '../errors.ts';

export interface ObjectInfo {
  key: string;
  /** Size of the whole object in bytes (also for ranged reads). */
  size: number;
  /** Quoted entity tag: `"<sha256>"` on the filesystem store, the server's ETag on S3. */
  etag: string;
  lastModified: Date;
  contentType?: string;
}

export interface PutOptions {
  contentType?: string;
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

/** Inclusive byte range. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface OpenReadResult {
  stream: NodeJS.ReadableStream & AsyncIterable<Buffer>;
  info: ObjectInfo;
  /** The range actually served (end clamped to the last byte); absent for a whole-object read. */
  range?: ByteRange;
}

export interface ArtifactStore {
  readonly kind: 'fs' | 's3';
  /** Human description without credentials: `file:/abs/dir` or `s3://bucket/prefix`. */
  readonly description: string;
  put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<ObjectInfo>;
  /** Upload a local file (streamed; multipart on S3 above a threshold). */
  putFile(key: string, filePath: string, options?: PutOptions): Promise<ObjectInfo>;
  /** Create only if absent; resolves false (and writes nothing) when the key exists. */
  putIfAbsent(key: string, body: Uint8Array | string, options?: PutOptions): Promise<boolean>;
  /**
   * Compare-and-swap: write `body` only if the key's current entity tag is `expectedEtag` (`null`:
   * only if the key is absent), atomically with respect to every other `putIfMatch`/`putIfAbsent`
   * on the same key. Resolves the new object's info, or null (and writes nothing) when the
   * precondition did not hold; the caller re-reads with `getVersioned` and decides again.
   */
  putIfMatch(
    key: string,
    body: Uint8Array | string,
    expectedEtag: string | null,
    options?: PutOptions,
  ): Promise<ObjectInfo | null>;
  get(key: string): Promise<Buffer | null>;
  /** An object's bytes together with the entity tag of exactly those bytes (for `putIfMatch`); null when absent. */
  getVersioned(key: string): Promise<{ body: Buffer; etag: string } | null>;
  stat(key: string): Promise<ObjectInfo | null>;
  /**
   * Stream an object, optionally a byte range (inclusive end, clamped to the object's last byte).
   * null when absent. A range that starts at or beyond the end of the object throws
   * `BridgeError('INVALID_ARGUMENT')` with `details.reason = 'RANGE_NOT_SATISFIABLE'` and `details.size`.
   */
  openRead(key: string, range?: ByteRange): Promise<OpenReadResult | null>;
  /** Keys under a prefix (recursive, plain string-prefix match), sorted. */
  list(prefix: string): Promise<string[]>;
  /** Delete a key; deleting an absent key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * URL a device-side consumer can download from: presigned (configurable expiry) or public-base-URL
   * on S3; null for the filesystem store (the bridge serves it itself). Never log it.
   */
  downloadUrl(key: string): Promise<string | null>;
  close(): Promise<void>;
}

export const MAX_KEY_LENGTH = 1024;
const SEGMENT = /^[A-Za-z0-9._@+-]+$/;

function invalidKey(what: string, key: string, problem: string): BridgeError {
  return new BridgeError('INVALID_ARGUMENT', `invalid artifact ${what} ${describeValue(key)}: ${problem}`, {
    details: { field: what, problem },
  });
}

function checkPath(value: unknown, what: 'key' | 'prefix'): asserts value is string {
  if (typeof value !== 'string') {
    throw new BridgeError('INVALID_ARGUMENT', `invalid artifact ${what}: expected a string`, {
      details: { field: what, problem: 'expected a string' },
    });
  }
  const key = value;
  if (key.length === 0) throw invalidKey(what, key, 'must not be empty');
  if (key.length > MAX_KEY_LENGTH) throw invalidKey(what, key, `longer than ${MAX_KEY_LENGTH} characters`);
  const control = /[\u0000-\u001f\u007f]/.exec(key);
  if (control) {
    const code = control[0].charCodeAt(0);
    throw invalidKey(
      what,
      key.replace(/[\u0000-\u001f\u007f]/g, '?'),
      code === 0
        ? 'contains a NUL character'
        : `contains control character U+${code.toString(16).padStart(4, '0')}`,
    );
  }
  if (key.includes('\\')) throw invalidKey(what, key, 'contains a backslash');
  if (key.startsWith('/')) throw invalidKey(what, key, "must not start with '/'");
  const segments = key.split('/');
  segments.forEach((segment, index) => {
    if (segment === '') {
      throw invalidKey(
        what,
        key,
        index === segments.length - 1 ? "must not end with '/'" : "contains an empty segment ('//')",
      );
    }
    if (segment === '.' || segment === '..') throw invalidKey(what, key, `contains a '${segment}' segment`);
    if (!SEGMENT.test(segment)) {
      const bad = [...segment].find((c) => !SEGMENT.test(c)) ?? '?';
      throw invalidKey(
        what,
        key,
        `character ${JSON.stringify(bad)} not allowed (segments use [A-Za-z0-9._@+-])`,
      );
    }
  });
}

/**
 * Validate a store key. Throws `BridgeError('INVALID_ARGUMENT')` naming the problem: segments of
 * `[A-Za-z0-9._@+-]`, no empty segment, no `.` or `..` segment, no leading `/`, no backslash, NUL or
 * control characters, at most 1024 characters.
 */
export function validateKey(key: string): void {
  checkPath(key, 'key');
}

/**
 * Validate a list prefix: empty (everything), or a key, optionally ending in `/`. A prefix is a
 * plain string prefix, so `helpers/a` matches `helpers/a/…` and `helpers/ab/…`.
 */
export function validatePrefix(prefix: string): void {
  if (prefix === '') return;
  if (typeof prefix === 'string' && prefix.endsWith('/') && prefix.length > 1) {
    checkPath(prefix.slice(0, -1), 'prefix');
    return;
  }
  checkPath(prefix, 'prefix');
}

/** Whether a key is valid, without throwing. */
export function isValidKey(key: string): boolean {
  try {
    validateKey(key);
    return true;
  } catch {
    return false;
  }
}

/** Validate a byte range against an object size; returns the clamped range. */
export function resolveRange(range: ByteRange, size: number, key: string): ByteRange {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `invalid byte range ${start}-${end} for ${describeValue(key)}`,
      {
        details: { reason: 'INVALID_RANGE', start, end },
      },
    );
  }
  if (start >= size) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `byte range ${start}-${end} not satisfiable: ${describeValue(key)} has ${size} bytes`,
      { details: { reason: 'RANGE_NOT_SATISFIABLE', start, end, size } },
    );
  }
  return { start, end: Math.min(end, size - 1) };
}

export function toBytes(body: Uint8Array | string): Uint8Array {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  throw new BridgeError('INVALID_ARGUMENT', 'artifact body must be a Uint8Array or a string');
}
