/**
 * Filesystem artifact store. Objects live at `<root>/<key>`; a sidecar under `<root>/~meta/<key>`
 * records the sha256 (the ETag) plus the inode, size and mtime it was computed for, so a stale or
 * missing sidecar is detected and recomputed. Writes go to a temp file in the target directory,
 * are fsynced and renamed into place (`put`) or hard-linked without overwrite (`putIfAbsent`, so
 * exactly one concurrent creator wins). Names containing `~` are never valid keys, which keeps temp
 * files and the sidecar tree out of `list`.
 *
 * Unlike S3, a key cannot be both an object and a "directory" (`a` and `a/b`): such a write is
 * refused with CONFLICT.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  type FileHandle,
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rmdir,
  stat,
  unlink,
} from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { BridgeError } from '../errors.ts';
import { decodeStored } from '../stored-record.ts';
import {
  type ArtifactStore,
  type ByteRange,
  isValidKey,
  type ObjectInfo,
  type OpenReadResult,
  type PutOptions,
  resolveRange,
  toBytes,
  validateKey,
  validatePrefix,
} from './store.ts';

const META_DIR = '~meta';

/** What `<key>.meta` (the sidecar of an object) holds: the object's sha256, for the file it was read from. */
const StoredSidecar = z.object({
  sha256: z.string(),
  size: z.number(),
  ino: z.number(),
  mtimeMs: z.number(),
  contentType: z.string().optional(),
});
type Sidecar = z.output<typeof StoredSidecar>;
const SIDECAR_LIMITS = { maxDepth: 1, maxBytes: 4096 };

type Source = { kind: 'bytes'; bytes: Uint8Array } | { kind: 'file'; filePath: string; size: number };

function errno(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;
}

function fsError(op: string, key: string, err: unknown): BridgeError {
  if (err instanceof BridgeError) return err;
  const code = errno(err);
  const message = `artifact store ${op} ${JSON.stringify(key)} failed: ${code ?? (err as Error)?.message ?? 'error'}`;
  switch (code) {
    case 'ENAMETOOLONG':
      return new BridgeError(
        'INVALID_ARGUMENT',
        `${message} (a key segment is too long for the filesystem)`,
        {
          cause: err,
        },
      );
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EMFILE':
    case 'ENFILE':
    case 'EIO':
    case 'EAGAIN':
    case 'EBUSY':
      return new BridgeError('UNAVAILABLE', message, { cause: err });
    default:
      return new BridgeError('INTERNAL', message, { cause: err });
  }
}

function conflict(key: string, why: string): BridgeError {
  return new BridgeError('CONFLICT', `cannot write ${JSON.stringify(key)}: ${why}`, {
    retryable: false,
    details: { key },
  });
}

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);

/** How long `putIfMatch` waits for another writer's lock before answering UNAVAILABLE. */
const LOCK_WAIT_MS = 10_000;
/** A lock file older than this was left by a crashed writer (a compare-and-swap holds it for milliseconds). */
const LOCK_STALE_MS = 30_000;

/**
 * Break a stale lock: move it aside under a unique name (only one breaker can), and put it back if it
 * turns out to be a fresh lock that replaced the stale one in the meantime.
 */
async function breakStaleLock(lockPath: string, dir: string): Promise<void> {
  const grave = path.join(dir, `.~stale-${randomBytes(8).toString('hex')}`);
  try {
    await rename(lockPath, grave);
  } catch {
    return; // someone else broke or released it
  }
  const st = await stat(grave).catch(() => null);
  if (st !== null && Date.now() - st.mtimeMs <= LOCK_STALE_MS) {
    await link(grave, lockPath).catch(() => undefined);
  }
  await unlink(grave).catch(() => undefined);
}

export class FsArtifactStore implements ArtifactStore {
  readonly kind = 'fs' as const;
  readonly description: string;
  readonly #root: string;

  constructor(root: string) {
    if (typeof root !== 'string' || root.length === 0 || root.includes('\0')) {
      throw new BridgeError('INVALID_ARGUMENT', 'filesystem artifact store needs a directory path');
    }
    this.#root = path.resolve(root);
    this.description = `file:${this.#root}`;
  }

  get root(): string {
    return this.#root;
  }

  /** Absolute path of a key's object file (for serving with sendfile etc.). */
  pathFor(key: string): string {
    validateKey(key);
    return this.#inside(this.#root, key);
  }

  #inside(base: string, key: string): string {
    const full = path.resolve(base, ...key.split('/'));
    if (!full.startsWith(this.#root + path.sep)) {
      throw new BridgeError('INVALID_ARGUMENT', `artifact key ${JSON.stringify(key)} escapes the store root`);
    }
    return full;
  }

  #metaPath(key: string): string {
    return this.#inside(path.join(this.#root, META_DIR), key);
  }

  async put(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<ObjectInfo> {
    validateKey(key);
    const info = await this.#write(key, { kind: 'bytes', bytes: toBytes(body) }, 'replace', options);
    return info as ObjectInfo;
  }

  async putFile(key: string, filePath: string, options: PutOptions = {}): Promise<ObjectInfo> {
    validateKey(key);
    const size = await sourceSize(filePath);
    const info = await this.#write(key, { kind: 'file', filePath, size }, 'replace', options);
    return info as ObjectInfo;
  }

  async putIfAbsent(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<boolean> {
    validateKey(key);
    const info = await this.#write(key, { kind: 'bytes', bytes: toBytes(body) }, 'create', options);
    return info !== null;
  }

  /**
   * Compare-and-swap under a per-key lock file (`.~lock-<name>` beside the object, created with
   * O_EXCL): read the current object's sha256 ETag, compare, write through temp file + rename (or
   * hard link when the key must be absent), release. A lock left by a crashed writer is broken after
   * LOCK_STALE_MS.
   */
  async putIfMatch(
    key: string,
    body: Uint8Array | string,
    expectedEtag: string | null,
    options: PutOptions = {},
  ): Promise<ObjectInfo | null> {
    validateKey(key);
    const bytes = toBytes(body);
    const release = await this.#lock(key);
    try {
      const current = await this.getVersioned(key);
      if ((current?.etag ?? null) !== expectedEtag) return null;
      return await this.#write(
        key,
        { kind: 'bytes', bytes },
        expectedEtag === null ? 'create' : 'replace',
        options,
      );
    } finally {
      await release();
    }
  }

  async getVersioned(key: string): Promise<{ body: Buffer; etag: string } | null> {
    const body = await this.get(key);
    if (body === null) return null;
    return { body, etag: `"${createHash('sha256').update(body).digest('hex')}"` };
  }

  /** Take the lock file of `key`; resolves the function that releases it. */
  async #lock(key: string): Promise<() => Promise<void>> {
    const target = this.#inside(this.#root, key);
    const dir = path.dirname(target);
    const lockPath = path.join(dir, `.~lock-${path.basename(target)}`);
    const token = `${process.pid} ${randomBytes(8).toString('hex')}\n`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        await mkdir(dir, { recursive: true });
        await writeAll(lockPath, Buffer.from(token));
        break;
      } catch (err) {
        const code = errno(err);
        if (code === 'ENOTDIR') throw conflict(key, 'a parent path segment is an existing object');
        if (code === 'ENOENT' && attempt < 5) continue; // a concurrent delete pruned the directory
        if (code !== 'EEXIST') throw fsError('lock', key, err);
      }
      const st = await stat(lockPath).catch(() => null);
      if (st !== null && Date.now() - st.mtimeMs > LOCK_STALE_MS) {
        await breakStaleLock(lockPath, dir);
        continue;
      }
      if (Date.now() > deadline) {
        throw new BridgeError(
          'UNAVAILABLE',
          `artifact store: ${JSON.stringify(key)} stayed locked by another writer for ${LOCK_WAIT_MS} ms`,
          { retryable: true, details: { key } },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(Math.random() * 10)));
    }
    return async () => {
      // Remove the lock only while it is still ours (a stale-lock breaker may have taken it).
      const held = await readFile(lockPath, 'utf8').catch(() => null);
      if (held === token) await unlink(lockPath).catch(() => undefined);
    };
  }

  async get(key: string): Promise<Buffer | null> {
    const handle = await this.#openFile(key);
    if (handle === null) return null;
    try {
      return await handle.fh.readFile();
    } catch (err) {
      throw fsError('get', key, err);
    } finally {
      await handle.fh.close();
    }
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    const handle = await this.#openFile(key);
    if (handle === null) return null;
    try {
      return await this.#info(key, handle.fh, handle.st);
    } catch (err) {
      throw fsError('stat', key, err);
    } finally {
      await handle.fh.close();
    }
  }

  async openRead(key: string, range?: ByteRange): Promise<OpenReadResult | null> {
    const handle = await this.#openFile(key);
    if (handle === null) return null;
    try {
      const info = await this.#info(key, handle.fh, handle.st);
      const served = range === undefined ? undefined : resolveRange(range, info.size, key);
      const stream = handle.fh.createReadStream({
        autoClose: true,
        ...(served === undefined ? {} : { start: served.start, end: served.end }),
      }) as unknown as NodeJS.ReadableStream & AsyncIterable<Buffer>;
      return served === undefined ? { stream, info } : { stream, info, range: served };
    } catch (err) {
      await handle.fh.close();
      throw fsError('openRead', key, err);
    }
  }

  async list(prefix: string): Promise<string[]> {
    validatePrefix(prefix);
    const dirPart = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const start = dirPart === '' ? this.#root : this.#inside(this.#root, dirPart.slice(0, -1));
    const keys: string[] = [];
    await this.#walk(start, dirPart, keys);
    return keys.filter((k) => k.startsWith(prefix)).sort();
  }

  async #walk(dir: string, keyPrefix: string, out: string[]): Promise<void> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (MISSING.has(errno(err) ?? '')) return;
      throw fsError('list', keyPrefix, err);
    }
    for (const entry of entries) {
      if (entry.name.includes('~')) continue; // temp files and the sidecar tree
      const key = `${keyPrefix}${entry.name}`;
      if (entry.isDirectory()) {
        await this.#walk(path.join(dir, entry.name), `${key}/`, out);
      } else if (entry.isFile() && isValidKey(key)) {
        out.push(key);
      }
    }
  }

  async delete(key: string): Promise<void> {
    validateKey(key);
    const file = this.#inside(this.#root, key);
    const meta = this.#metaPath(key);
    for (const target of [file, meta]) {
      try {
        await unlink(target);
      } catch (err) {
        const code = errno(err) ?? '';
        if (!MISSING.has(code) && code !== 'EPERM') throw fsError('delete', key, err);
      }
    }
    await this.#pruneEmptyDirs(path.dirname(file), this.#root);
    await this.#pruneEmptyDirs(path.dirname(meta), path.join(this.#root, META_DIR));
  }

  async #pruneEmptyDirs(dir: string, stopAt: string): Promise<void> {
    let current = dir;
    while (current.startsWith(stopAt + path.sep)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty (or already gone / in use by a concurrent writer)
      }
      current = path.dirname(current);
    }
  }

  async downloadUrl(key: string): Promise<string | null> {
    validateKey(key);
    return null;
  }

  async close(): Promise<void> {}

  async #openFile(key: string): Promise<{ fh: FileHandle; st: import('node:fs').Stats } | null> {
    validateKey(key);
    const file = this.#inside(this.#root, key);
    let fh: FileHandle;
    try {
      fh = await open(file, 'r');
    } catch (err) {
      if (MISSING.has(errno(err) ?? '')) return null;
      throw fsError('read', key, err);
    }
    const st = await fh.stat();
    if (!st.isFile()) {
      await fh.close();
      return null;
    }
    return { fh, st };
  }

  /** Object info for an open file; recomputes (and re-records) the sha256 when the sidecar is stale. */
  async #info(key: string, fh: FileHandle, st: import('node:fs').Stats): Promise<ObjectInfo> {
    const metaPath = this.#metaPath(key);
    // Missing, unreadable or stale: recomputed from the bytes (the sidecar is only a cache).
    let sidecar: Sidecar | null = await readFile(metaPath)
      .then((bytes) => decodeStored(StoredSidecar, bytes, { kind: 'artifact sidecar', key }, SIDECAR_LIMITS))
      .catch(() => null);
    if (
      sidecar !== null &&
      (sidecar.ino !== st.ino || sidecar.size !== st.size || sidecar.mtimeMs !== st.mtimeMs)
    ) {
      sidecar = null;
    }
    if (sidecar === null) {
      const hash = createHash('sha256');
      for await (const chunk of fh.createReadStream({ start: 0, autoClose: false, emitClose: false })) {
        hash.update(chunk as Buffer);
      }
      sidecar = { sha256: hash.digest('hex'), size: st.size, ino: st.ino, mtimeMs: st.mtimeMs };
      await this.#writeSidecar(key, sidecar).catch(() => undefined);
    }
    return {
      key,
      size: st.size,
      etag: `"${sidecar.sha256}"`,
      lastModified: st.mtime,
      ...(sidecar.contentType === undefined ? {} : { contentType: sidecar.contentType }),
    };
  }

  async #writeSidecar(key: string, sidecar: Sidecar): Promise<void> {
    const target = this.#metaPath(key);
    const dir = path.dirname(target);
    await mkdir(dir, { recursive: true });
    const tmp = path.join(dir, `.~tmp-${randomBytes(8).toString('hex')}`);
    try {
      await writeAll(tmp, Buffer.from(JSON.stringify(sidecar)));
      await rename(tmp, target);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  /** Write atomically. Returns null when `mode` is 'create' and the key already exists. */
  async #write(
    key: string,
    source: Source,
    mode: 'replace' | 'create',
    options: PutOptions,
  ): Promise<ObjectInfo | null> {
    const target = this.#inside(this.#root, key);
    const dir = path.dirname(target);
    const total = source.kind === 'bytes' ? source.bytes.length : source.size;
    let fh: FileHandle | undefined;
    let tmp = '';
    // A concurrent delete may prune the directory between mkdir and open: retry a few times.
    for (let attempt = 0; fh === undefined; attempt++) {
      try {
        await mkdir(dir, { recursive: true });
        tmp = path.join(dir, `.~tmp-${randomBytes(8).toString('hex')}`);
        fh = await open(tmp, 'wx', 0o644);
      } catch (err) {
        const code = errno(err);
        if (code === 'ENOTDIR' || code === 'EEXIST') {
          throw conflict(key, 'a parent path segment is an existing object');
        }
        if (code === 'ENOENT' && attempt < 5) continue;
        throw fsError('put', key, err);
      }
    }
    let renamed = false;
    try {
      const hash = createHash('sha256');
      let sent = 0;
      options.onProgress?.(0, total);
      const chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array> =
        source.kind === 'bytes'
          ? [source.bytes]
          : createReadStream(source.filePath, { highWaterMark: 1 << 20 });
      for await (const chunk of chunks) {
        hash.update(chunk);
        await writeChunk(fh, chunk);
        sent += chunk.length;
        options.onProgress?.(sent, total);
      }
      await fh.sync();
      const st = await fh.stat();
      await fh.close();
      fh = undefined;
      if (mode === 'create') {
        try {
          await link(tmp, target);
        } catch (err) {
          if (errno(err) === 'EEXIST') return null;
          throw err;
        }
      } else {
        try {
          await rename(tmp, target);
          renamed = true;
        } catch (err) {
          const code = errno(err);
          if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') {
            throw conflict(key, 'the key is a prefix of existing keys');
          }
          throw err;
        }
      }
      await syncDir(dir);
      const sidecar: Sidecar = {
        sha256: hash.digest('hex'),
        size: st.size,
        ino: st.ino,
        mtimeMs: st.mtimeMs,
        ...(options.contentType === undefined ? {} : { contentType: options.contentType }),
      };
      await this.#writeSidecar(key, sidecar);
      return {
        key,
        size: st.size,
        etag: `"${sidecar.sha256}"`,
        lastModified: st.mtime,
        ...(options.contentType === undefined ? {} : { contentType: options.contentType }),
      };
    } catch (err) {
      throw fsError('put', key, err);
    } finally {
      await fh?.close().catch(() => undefined);
      if (!renamed) await unlink(tmp).catch(() => undefined);
    }
  }
}

async function writeChunk(fh: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await fh.write(chunk, offset, chunk.length - offset);
    offset += bytesWritten;
  }
}

async function writeAll(file: string, bytes: Uint8Array): Promise<void> {
  const fh = await open(file, 'wx', 0o644);
  try {
    await writeChunk(fh, bytes);
  } finally {
    await fh.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  }
}

/** Size of a local source file; a clear INVALID_ARGUMENT when it is missing or not a file. */
export async function sourceSize(filePath: string): Promise<number> {
  try {
    const st = await stat(filePath);
    if (!st.isFile()) throw new BridgeError('INVALID_ARGUMENT', `not a regular file: ${filePath}`);
    return st.size;
  } catch (err) {
    if (err instanceof BridgeError) throw err;
    throw new BridgeError('INVALID_ARGUMENT', `cannot read file ${filePath}: ${errno(err) ?? String(err)}`, {
      cause: err,
    });
  }
}
