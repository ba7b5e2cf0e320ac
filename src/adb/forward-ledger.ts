/**
 * Every `adb forward` the bridge creates is recorded against its owner (a lease id or a session id)
 * and removed when the owner ends. `reconcile` compares the ledger with the adb server's own list
 * and removes strays the bridge created (all of them on the bridge's private adb server; on an
 * external server only forwards this ledger ever created).
 *
 * With a socket directory (the bridge's own adb server on this host), `openReachable` forwards from
 * a unix socket in it (`localfilesystem:`) instead of a loopback TCP port: only the bridge's user can
 * reach it (no port any local process may connect to). adb leaves the socket file behind when a forward is removed:
 * the ledger unlinks it (on removal, for strays a killed bridge left, and for forwards a restarted
 * server lost); `dispose` removes the directory when the bridge ends.
 */
import type { Deadline } from './deadline.ts';
import { filesystemSpecPath } from './forward-target.ts';
import type { SocketDir } from './socket-dir.ts';

export interface ForwardEntry {
  owner: string;
  serial: string;
  local: string;
  remote: string;
}

/** The part of AdbClient the ledger needs (tests of code above may pass their own). */
export interface ForwardOps {
  forward(serial: string, local: string, remote: string, deadline?: Deadline): Promise<string>;
  removeForward(serial: string, local: string, deadline?: Deadline): Promise<void>;
  listForwards(deadline?: Deadline): Promise<Array<{ serial: string; local: string; remote: string }>>;
}

export interface ReconcileResult {
  /** `serial local remote` of every stray removed from the server. */
  removedStrays: string[];
  /** Ledger entries the server no longer had. */
  forgotten: ForwardEntry[];
}

export interface ReleaseReport {
  removed: ForwardEntry[];
  failed: Array<ForwardEntry & { error: string }>;
}

const key = (serial: string, local: string) => `${serial}\u0000${local}`;

export class ForwardLedger {
  readonly #adb: ForwardOps;
  readonly #ownsServer: boolean;
  readonly #sockets: SocketDir | undefined;
  readonly #entries = new Map<string, ForwardEntry>();
  /** Everything this ledger ever created, so strays on an external server can be told apart. */
  readonly #created = new Set<string>();
  /** `forward` calls in flight: reconcile waits for them, so it never takes a new forward for a stray. */
  readonly #inflight = new Set<Promise<unknown>>();
  #reconciling: Promise<ReconcileResult> | undefined;

  /** `sockets`: only for the bridge's own adb server, running as the bridge's user on this host. */
  constructor(adb: ForwardOps, options: { ownsServer: boolean; sockets?: SocketDir }) {
    this.#adb = adb;
    this.#ownsServer = options.ownsServer;
    this.#sockets = options.sockets;
  }

  /**
   * A forward to `remote` the bridge itself connects to (see forwardTarget): from a fresh unix socket
   * when the ledger has a socket directory, else from `tcp:0` (also when the directory is unusable,
   * e.g. a TMPDIR too long for a socket path).
   */
  async openReachable(
    owner: string,
    serial: string,
    remote: string,
    deadline?: Deadline,
  ): Promise<ForwardEntry> {
    const socket = await this.#sockets?.next().catch(() => undefined);
    return this.open(
      owner,
      serial,
      socket === undefined ? 'tcp:0' : `localfilesystem:${socket}`,
      remote,
      deadline,
    );
  }

  /** Unlink the socket file a removed `localfilesystem:` forward leaves (only in a socket directory). */
  async #unlinkSocket(local: string): Promise<void> {
    const file = filesystemSpecPath(local);
    if (file !== undefined) await this.#sockets?.unlink(file);
  }

  /** Remove the socket directory (the bridge ends; its adb server's forwards go with it). */
  async dispose(): Promise<void> {
    await this.#sockets?.remove();
  }

  /** Create a forward for `owner`; `local` may be `tcp:0` (the adb server picks the port). */
  async open(
    owner: string,
    serial: string,
    local: string,
    remote: string,
    deadline?: Deadline,
  ): Promise<ForwardEntry> {
    while (this.#reconciling) await this.#reconciling.catch(() => undefined);
    const work = this.#adb.forward(serial, local, remote, deadline);
    this.#inflight.add(work);
    try {
      const bound = await work;
      const entry = { owner, serial, local: bound, remote };
      this.#entries.set(key(serial, bound), entry);
      this.#created.add(key(serial, bound));
      return entry;
    } finally {
      this.#inflight.delete(work);
    }
  }

  /**
   * Whether the adb server still has `entry`'s forward (same serial, local and remote). One it no
   * longer has — adb drops a device's forwards when its transport ends, a restarted server starts
   * with none — is forgotten here (its socket file unlinked), so nothing stale stays to connect to:
   * the owner opens a new one. A listener the server gives another target is left alone.
   */
  async verify(entry: ForwardEntry, deadline?: Deadline): Promise<boolean> {
    while (this.#reconciling) await this.#reconciling.catch(() => undefined);
    const live = await this.#adb.listForwards(deadline);
    if (live.some((f) => f.serial === entry.serial && f.local === entry.local && f.remote === entry.remote)) {
      return true;
    }
    const k = key(entry.serial, entry.local);
    const held = this.#entries.get(k);
    if (held !== undefined && held.owner === entry.owner && held.remote === entry.remote) {
      this.#entries.delete(k);
      if (!live.some((f) => f.serial === entry.serial && f.local === entry.local)) {
        await this.#unlinkSocket(entry.local);
      }
    }
    return false;
  }

  /** Whether `owner` has a forward in the ledger (no list built). */
  holds(owner: string): boolean {
    for (const entry of this.#entries.values()) if (entry.owner === owner) return true;
    return false;
  }

  entries(owner?: string): ForwardEntry[] {
    return [...this.#entries.values()].filter((e) => owner === undefined || e.owner === owner);
  }

  /**
   * Remove a forward on the server. A forward the server no longer has is a successful removal:
   * adb drops a device's forwards itself when it goes offline, and `killforward` then answers FAIL
   * (with an empty message, or "listener ... not found"). When the removal fails, the server's own
   * list decides: absent there means removed; present (or no list) means the failure stands.
   */
  async #remove(serial: string, local: string, deadline?: Deadline): Promise<void> {
    try {
      await this.#adb.removeForward(serial, local, deadline);
    } catch (err) {
      if (/listener .* not found|not found|cannot remove/i.test((err as Error).message)) return;
      let listed: Array<{ serial: string; local: string }>;
      try {
        listed = await this.#adb.listForwards(deadline);
      } catch {
        throw err;
      }
      if (listed.some((f) => f.serial === serial && f.local === local)) throw err;
    }
  }

  /** Remove one forward (e.g. a session closing) whatever its owner. */
  async close(serial: string, local: string, deadline?: Deadline): Promise<void> {
    const k = key(serial, local);
    if (!this.#entries.has(k)) return;
    await this.#remove(serial, local, deadline);
    this.#entries.delete(k);
    await this.#unlinkSocket(local);
  }

  /** Remove every forward `owner` created; failures are reported, not thrown, and stay in the ledger. */
  async release(owner: string, deadline?: Deadline): Promise<ReleaseReport> {
    const report: ReleaseReport = { removed: [], failed: [] };
    for (const entry of this.entries(owner)) {
      try {
        await this.#remove(entry.serial, entry.local, deadline);
        this.#entries.delete(key(entry.serial, entry.local));
        await this.#unlinkSocket(entry.local);
        report.removed.push(entry);
      } catch (err) {
        report.failed.push({ ...entry, error: (err as Error).message });
      }
    }
    return report;
  }

  /**
   * Remove forwards on the server that no live owner holds but the bridge created; forget ledger
   * entries the server no longer has (e.g. after an adb server restart). Runs at start-up and after
   * every adb server change (AdbRuntime), so a SIGKILLed bridge's forwards on its private server are
   * removed. Concurrent calls share one pass; `open` waits for it, and it waits for opens in flight.
   */
  reconcile(deadline?: Deadline): Promise<ReconcileResult> {
    this.#reconciling ??= (async () => {
      await Promise.allSettled([...this.#inflight]);
      return this.#reconcileNow(deadline);
    })().finally(() => {
      this.#reconciling = undefined;
    });
    return this.#reconciling;
  }

  async #reconcileNow(deadline?: Deadline): Promise<ReconcileResult> {
    const live = await this.#adb.listForwards(deadline);
    const onServer = new Set(live.map((f) => key(f.serial, f.local)));
    const removedStrays: string[] = [];
    for (const f of live) {
      const k = key(f.serial, f.local);
      if (this.#entries.has(k)) continue;
      if (this.#ownsServer || this.#created.has(k)) {
        await this.#adb.removeForward(f.serial, f.local, deadline).catch(() => undefined);
        await this.#unlinkSocket(f.local);
        removedStrays.push(`${f.serial} ${f.local} ${f.remote}`);
      }
    }
    const forgotten: ForwardEntry[] = [];
    for (const [k, entry] of this.#entries) {
      if (!onServer.has(k)) {
        this.#entries.delete(k);
        await this.#unlinkSocket(entry.local);
        forgotten.push(entry);
      }
    }
    return { removedStrays, forgotten };
  }
}
