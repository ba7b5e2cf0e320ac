/**
 * A private directory of unix sockets the bridge and its own adb server share: made by mkdtemp
 * (mode 0700: only the bridge's user may enter it, so no other local user can reach what listens
 * there, unlike a loopback TCP port), on first use, under TMPDIR; removed with `remove()`. The paths
 * are absolute (the adb server resolves them against its own working directory) and fit adb's
 * `localfilesystem:` specs (no `;`, at most MAX_SOCKET_PATH bytes). Used by the helper forwards
 * (forward-ledger.ts) and the adb reverses (relay-reverse.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, rmdir, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { filesystemSpecPath, MAX_SOCKET_PATH } from './forward-target.ts';

export class SocketDir {
  readonly #prefix: string;
  readonly #parent: string;
  #dir: Promise<string> | undefined;
  #next = 1;

  /** `prefix` names the directory (`devicebridge-forward-`); `parent` is TMPDIR unless given. */
  constructor(prefix: string, parent: string = os.tmpdir()) {
    this.#prefix = prefix;
    this.#parent = path.resolve(parent);
  }

  /** A fresh socket path; rejects when the directory cannot be made or the path would not fit adb. */
  async next(): Promise<string> {
    let dir = await this.#made();
    // A TMPDIR cleaner (systemd-tmpfiles, tmpreaper) may remove an old directory under a long-running
    // bridge: make a new one rather than hand out paths adb cannot bind.
    if (!existsSync(dir)) {
      if (this.#dir !== undefined && (await this.#dir.catch(() => undefined)) === dir) this.#dir = undefined;
      dir = await this.#made();
    }
    const file = path.join(dir, `${this.#next++}.sock`);
    if (filesystemSpecPath(`localfilesystem:${file}`) === undefined) {
      // (The path itself is the bridge host's business: not in a message a client may see.)
      throw new Error(
        `the bridge's socket path is over ${MAX_SOCKET_PATH} bytes or has characters adb specs cannot carry (set a short, plain TMPDIR on the bridge)`,
      );
    }
    return file;
  }

  /** The directory, made on first use (a failed mkdtemp is tried again next time). */
  #made(): Promise<string> {
    this.#dir ??= mkdtemp(path.join(this.#parent, this.#prefix));
    return this.#dir.catch((err: unknown) => {
      this.#dir = undefined;
      throw err;
    });
  }

  /**
   * Whether `file` is a socket path this kind of directory holds (this object's or, for strays a
   * killed bridge left, another of the same prefix under the same parent).
   */
  holds(file: string): boolean {
    const dir = path.dirname(file);
    return (
      path.dirname(dir) === this.#parent &&
      path.basename(dir).startsWith(this.#prefix) &&
      /^\d+\.sock$/.test(path.basename(file))
    );
  }

  /**
   * Remove a socket file whose listener is gone (adb leaves the file behind), and its directory when
   * that was a killed bridge's and is now empty. Only paths `holds` accepts; never throws.
   */
  async unlink(file: string): Promise<void> {
    if (!this.holds(file)) return;
    await unlink(file).catch(() => undefined);
    const mine = this.#dir === undefined ? undefined : await this.#dir.catch(() => undefined);
    if (path.dirname(file) !== mine) await rmdir(path.dirname(file)).catch(() => undefined);
  }

  /** Remove the directory and everything in it (the bridge or connection ends). Idempotent. */
  async remove(): Promise<void> {
    const dir = this.#dir;
    this.#dir = undefined;
    if (dir === undefined) return;
    const made = await dir.catch(() => undefined);
    if (made !== undefined) await rm(made, { recursive: true, force: true }).catch(() => undefined);
  }
}
