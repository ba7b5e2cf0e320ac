/**
 * The emulated device's in-memory file system. Paths are absolute; permissions follow what the
 * `shell` user (uid 2000) sees on a real device: `/data/local/tmp` and `/sdcard` (with a fresh
 * device's folders; `Android/data` and `Android/obb` cannot be listed, as on Android 11+) are writable,
 * `/system` and `/` are read-only mounts, `/data` and `/data/app` cannot be listed or written but
 * the installed APKs under them can be read (so `sha256sum $(pm path ...)` works).
 */
import type { FileStat, SimFileSystem } from '../types.ts';

/** Error whose message is the Android wording (`No such file or directory`, ...). */
export class FsError extends Error {
  readonly errno: FsErrno;
  constructor(errno: FsErrno) {
    super(FS_MESSAGES[errno]);
    this.name = 'FsError';
    this.errno = errno;
  }
}

export type FsErrno = 'ENOENT' | 'EROFS' | 'EISDIR' | 'EACCES' | 'ENOTDIR' | 'EEXIST' | 'ENOTEMPTY';

const FS_MESSAGES: Record<FsErrno, string> = {
  ENOENT: 'No such file or directory',
  EROFS: 'Read-only file system',
  EISDIR: 'Is a directory',
  EACCES: 'Permission denied',
  ENOTDIR: 'Not a directory',
  EEXIST: 'File exists',
  ENOTEMPTY: 'Directory not empty',
};

/** Who performs an operation: the adb `shell` user, or the system (package manager, setup). */
export type FsActor = 'shell' | 'system';

/** mtime of files baked into the system image (AOSP builds stamp 2009-01-01 00:00:00 UTC). */
export const SYSTEM_MTIME = 1230768000;

const DEFAULT_FILE_MODE = 0o100644;
const DEFAULT_DIR_MODE = 0o40755;
const TYPE_MASK = 0o170000;
const DIR_TYPE = 0o040000;

interface DirAccess {
  /** The shell user may create/remove entries here. */
  writable: boolean;
  /** The shell user may list this directory (read permission). */
  listable: boolean;
  /** On a read-only mount (nobody writes, not even the system at runtime). */
  readOnlyMount: boolean;
}

interface FileNode {
  kind: 'file';
  data: Uint8Array;
  mode: number;
  mtimeSec: number;
  /** `/dev/null`: reads are empty, writes vanish. */
  sink?: boolean;
}

interface DirNode extends DirAccess {
  kind: 'dir';
  children: Map<string, Node>;
  mode: number;
  mtimeSec: number;
}

type Node = FileNode | DirNode;

const nowSec = (): number => Math.floor(Date.now() / 1000);

/** Normalise an absolute path (`//a/./b/../c/` -> `/a/c`). Relative paths resolve against `cwd`. */
export function normalizePath(path: string, cwd = '/'): string {
  const joined = path.startsWith('/') ? path : `${cwd}/${path}`;
  const out: string[] = [];
  for (const part of joined.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

function splitPath(path: string): string[] {
  const normal = normalizePath(path);
  return normal === '/' ? [] : normal.slice(1).split('/');
}

function basename(path: string): string {
  const parts = splitPath(path);
  return parts[parts.length - 1] ?? '/';
}

function statOf(node: Node): FileStat {
  return node.kind === 'dir'
    ? { type: 'dir', size: 4096, mode: node.mode, mtimeSec: node.mtimeSec }
    : { type: 'file', size: node.data.byteLength, mode: node.mode, mtimeSec: node.mtimeSec };
}

export interface MkdirOptions {
  mode?: number;
  mtimeSec?: number;
  access?: Partial<DirAccess>;
}

/** The in-memory file system. Implements `SimFileSystem` (shell-user view) plus system-side helpers. */
export class MemoryFileSystem implements SimFileSystem {
  readonly #root: DirNode;

  constructor() {
    this.#root = {
      kind: 'dir',
      children: new Map(),
      mode: DEFAULT_DIR_MODE,
      mtimeSec: SYSTEM_MTIME,
      writable: false,
      listable: true,
      readOnlyMount: false,
    };
  }

  // ---- SimFileSystem (what `sync:` and the shell see, as the shell user) ----

  stat(path: string): FileStat | undefined {
    const node = this.#lookup(path);
    return node === undefined ? undefined : statOf(node);
  }

  readFile(path: string): Uint8Array | undefined {
    try {
      return this.read(path);
    } catch {
      return undefined;
    }
  }

  writeFile(path: string, data: Uint8Array, options: { mode?: number; mtimeSec?: number } = {}): void {
    this.write(path, data, { ...options, actor: 'shell' });
  }

  list(path: string): Array<{ name: string; stat: FileStat }> | undefined {
    try {
      return this.readdir(path);
    } catch {
      return undefined;
    }
  }

  mkdirp(path: string): void {
    this.mkdir(path, { parents: true, actor: 'shell' });
  }

  remove(path: string): boolean {
    try {
      this.rm(path, { recursive: true, actor: 'shell' });
      return true;
    } catch {
      return false;
    }
  }

  // ---- Throwing operations with Android error wording ----

  /** Read a file's bytes; throws `FsError`. */
  read(path: string): Uint8Array {
    const node = this.#lookupOrThrow(path);
    if (node.kind === 'dir') throw new FsError('EISDIR');
    return node.sink === true ? new Uint8Array(0) : node.data;
  }

  /** List a directory; throws `FsError` (`Permission denied` for `/data` as the shell user). */
  readdir(path: string, actor: FsActor = 'shell'): Array<{ name: string; stat: FileStat }> {
    const node = this.#lookupOrThrow(path);
    if (node.kind !== 'dir') throw new FsError('ENOTDIR');
    if (actor === 'shell' && !node.listable) throw new FsError('EACCES');
    return [...node.children.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, child]) => ({ name, stat: statOf(child) }));
  }

  write(
    path: string,
    data: Uint8Array,
    options: { mode?: number; mtimeSec?: number; actor?: FsActor; append?: boolean } = {},
  ): void {
    const actor = options.actor ?? 'shell';
    const { parent, name } = this.#parentOf(path);
    const existing = parent.children.get(name);
    if (existing?.kind === 'dir') throw new FsError('EISDIR');
    if (existing?.kind === 'file' && existing.sink === true) return;
    this.#checkWritable(parent, actor);
    const mode = options.mode === undefined ? DEFAULT_FILE_MODE : normalizeFileMode(options.mode);
    const mtimeSec = options.mtimeSec ?? nowSec();
    if (existing !== undefined && options.append === true) {
      const merged = new Uint8Array(existing.data.byteLength + data.byteLength);
      merged.set(existing.data, 0);
      merged.set(data, existing.data.byteLength);
      existing.data = merged;
      existing.mtimeSec = mtimeSec;
      return;
    }
    parent.children.set(name, {
      kind: 'file',
      data: copyBytes(data),
      mode: existing !== undefined && options.mode === undefined ? existing.mode : mode,
      mtimeSec,
    });
    parent.mtimeSec = mtimeSec;
  }

  /** Create a directory (`mkdir [-p]`); throws `FsError`. */
  mkdir(path: string, options: { parents?: boolean; actor?: FsActor } & MkdirOptions = {}): void {
    const actor = options.actor ?? 'shell';
    const parts = splitPath(path);
    if (parts.length === 0) {
      if (options.parents === true) return;
      throw new FsError('EEXIST');
    }
    let dir = this.#root;
    for (const [i, part] of parts.entries()) {
      const last = i === parts.length - 1;
      const child = dir.children.get(part);
      if (child !== undefined) {
        if (child.kind !== 'dir') throw new FsError(last ? 'EEXIST' : 'ENOTDIR');
        if (last && options.parents !== true) throw new FsError('EEXIST');
        dir = child;
        continue;
      }
      if (!last && options.parents !== true) throw new FsError('ENOENT');
      this.#checkWritable(dir, actor);
      const created: DirNode = {
        kind: 'dir',
        children: new Map(),
        mode: last && options.mode !== undefined ? normalizeDirMode(options.mode) : DEFAULT_DIR_MODE,
        mtimeSec: options.mtimeSec ?? nowSec(),
        writable: options.access?.writable ?? (actor === 'shell' ? true : dir.writable),
        listable: options.access?.listable ?? true,
        readOnlyMount: options.access?.readOnlyMount ?? dir.readOnlyMount,
      };
      dir.children.set(part, created);
      dir = created;
    }
  }

  /** Remove a file or (with `recursive`) a directory tree; throws `FsError`. */
  rm(path: string, options: { recursive?: boolean; actor?: FsActor } = {}): void {
    const actor = options.actor ?? 'shell';
    const { parent, name } = this.#parentOf(path);
    const node = parent.children.get(name);
    if (node === undefined) throw new FsError('ENOENT');
    if (node.kind === 'dir') {
      if (options.recursive !== true) throw new FsError('EISDIR');
      if (actor === 'shell') this.#checkTreeRemovable(node);
    }
    this.#checkWritable(parent, actor);
    parent.children.delete(name);
    parent.mtimeSec = nowSec();
  }

  /** Remove an empty directory (`rmdir`); throws `FsError`. */
  rmdir(path: string, actor: FsActor = 'shell'): void {
    const { parent, name } = this.#parentOf(path);
    const node = parent.children.get(name);
    if (node === undefined) throw new FsError('ENOENT');
    if (node.kind !== 'dir') throw new FsError('ENOTDIR');
    if (node.children.size > 0) throw new FsError('ENOTEMPTY');
    this.#checkWritable(parent, actor);
    parent.children.delete(name);
    parent.mtimeSec = nowSec();
  }

  /** Set directory access flags (system setup). */
  setAccess(path: string, access: Partial<DirAccess>): void {
    const node = this.#lookupOrThrow(path);
    if (node.kind !== 'dir') throw new FsError('ENOTDIR');
    Object.assign(node, access);
  }

  /** Mark `path` (and with `recursive` everything under it) as a read-only mount. */
  sealReadOnly(path: string, recursive: boolean): void {
    const node = this.#lookupOrThrow(path);
    if (node.kind !== 'dir') throw new FsError('ENOTDIR');
    const seal = (dir: DirNode): void => {
      dir.readOnlyMount = true;
      dir.writable = false;
      if (!recursive) return;
      for (const child of dir.children.values()) if (child.kind === 'dir') seal(child);
    };
    seal(node);
  }

  /** Make `path` a sink like `/dev/null`. */
  makeSink(path: string, mode = 0o20666): void {
    const { parent, name } = this.#parentOf(path);
    parent.children.set(name, {
      kind: 'file',
      data: new Uint8Array(0),
      mode,
      mtimeSec: SYSTEM_MTIME,
      sink: true,
    });
  }

  // ---- internals ----

  #lookup(path: string): Node | undefined {
    let node: Node = this.#root;
    for (const part of splitPath(path)) {
      if (node.kind !== 'dir') return undefined;
      const child: Node | undefined = node.children.get(part);
      if (child === undefined) return undefined;
      node = child;
    }
    return node;
  }

  #lookupOrThrow(path: string): Node {
    let node: Node = this.#root;
    for (const part of splitPath(path)) {
      if (node.kind !== 'dir') throw new FsError('ENOTDIR');
      const child: Node | undefined = node.children.get(part);
      if (child === undefined) throw new FsError('ENOENT');
      node = child;
    }
    return node;
  }

  #parentOf(path: string): { parent: DirNode; name: string } {
    const parts = splitPath(path);
    const name = parts.pop();
    if (name === undefined) throw new FsError('EISDIR');
    const parent = this.#lookupOrThrow(`/${parts.join('/')}`);
    if (parent.kind !== 'dir') throw new FsError('ENOTDIR');
    return { parent, name: basename(name) };
  }

  #checkWritable(dir: DirNode, actor: FsActor): void {
    if (dir.readOnlyMount) throw new FsError('EROFS');
    if (actor === 'shell' && !dir.writable) throw new FsError('EACCES');
  }

  #checkTreeRemovable(dir: DirNode): void {
    for (const child of dir.children.values()) {
      if (child.kind === 'dir') {
        this.#checkWritable(child, 'shell');
        this.#checkTreeRemovable(child);
      }
    }
    if (dir.children.size > 0) this.#checkWritable(dir, 'shell');
  }
}

function normalizeFileMode(mode: number): number {
  return (mode & TYPE_MASK) === 0 ? 0o100000 | (mode & 0o7777) : mode;
}

function normalizeDirMode(mode: number): number {
  return DIR_TYPE | (mode & 0o7777);
}

function copyBytes(data: Uint8Array): Uint8Array {
  const copy = new Uint8Array(data.byteLength);
  copy.set(data);
  return copy;
}

/** The folders of a fresh device's shared storage (`/sdcard`). */
export const SDCARD_FOLDERS: readonly string[] = [
  'Alarms',
  'Android',
  'DCIM',
  'Documents',
  'Download',
  'Movies',
  'Music',
  'Notifications',
  'Pictures',
  'Podcasts',
  'Ringtones',
];

/** Build the stock Android layout the shell user sees; `systemFiles` land in the read-only image. */
export function createAndroidFileSystem(
  systemFiles: Record<string, string | Uint8Array> = {},
): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  const sys = (path: string, options: MkdirOptions = {}): void =>
    fs.mkdir(path, { parents: true, actor: 'system', mtimeSec: SYSTEM_MTIME, ...options });
  const hidden = { writable: false, listable: false };

  for (const dir of ['/system/bin', '/system/app', '/system/priv-app', '/system/framework', '/system/etc']) {
    sys(dir, { access: { writable: false } });
  }
  sys('/vendor', { access: { writable: false } });
  sys('/product', { access: { writable: false } });
  for (const mount of ['/data', '/dev', '/sdcard', '/storage', '/proc', '/cache', '/mnt']) {
    sys(mount, { mode: 0o40771, access: hidden });
  }
  fs.setAccess('/dev', { listable: true });
  fs.setAccess('/storage', { listable: true });
  sys('/data/local', { mode: 0o40751, access: hidden });
  sys('/data/local/tmp', { mode: 0o40771, access: { writable: true, listable: true } });
  sys('/data/app', { mode: 0o40771, access: hidden });
  sys('/data/user/0', { mode: 0o40771, access: hidden });
  fs.setAccess('/sdcard', { writable: true, listable: true });
  for (const dir of SDCARD_FOLDERS) {
    sys(`/sdcard/${dir}`, { mode: 0o42770, access: { writable: true, listable: true } });
  }
  // Android 11+: apps' external dirs are off limits to other apps and to the shell.
  for (const dir of ['data', 'obb']) {
    sys(`/sdcard/Android/${dir}`, { mode: 0o42770, access: { writable: false, listable: false } });
  }
  sys('/sdcard/Android/media', { mode: 0o42770, access: { writable: true, listable: true } });
  fs.makeSink('/dev/null');

  const encoder = new TextEncoder();
  for (const [path, content] of Object.entries(systemFiles)) {
    const bytes = typeof content === 'string' ? encoder.encode(content) : content;
    const mode = path.startsWith('/system/bin/') ? 0o100755 : DEFAULT_FILE_MODE;
    sys(normalizePath(`${path}/..`), { access: { writable: false } });
    fs.write(path, bytes, { actor: 'system', mode, mtimeSec: SYSTEM_MTIME });
  }
  // Mount the images read-only only now that they are populated.
  for (const image of ['/system', '/vendor', '/product']) fs.sealReadOnly(image, true);
  fs.sealReadOnly('/', false);
  return fs;
}
