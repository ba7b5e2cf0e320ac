/**
 * The node directory: which bridge nodes are alive and the URL each answers on, so a node that does
 * not drive a device can hand a lease-scoped call to the node that does, readers can tell a device
 * whose owner died (`ownerless`), and a surviving node can take such a device over. An entry lives
 * as long as its node's heartbeat keeps it fresh (Redis: a key with a TTL, on Redis's clock; memory:
 * a timestamp); a clean shutdown removes it at once. Memory by default; on Redis
 * (src/devices/redis-store.ts) for many nodes.
 */
import { decodeStored, isStoredRecordError } from '../stored-record.ts';
import { StoredNodeEntry } from './stored-records.ts';

export interface NodeDirectory {
  /** Record (or refresh) this node as alive for `ttlMs`, with its URL (null: alive, not reachable by URL yet). */
  announce(node: string, url: string | null, ttlMs?: number): Promise<void>;
  /** The node's URL while its heartbeat is fresh, else null. */
  urlOf(node: string): Promise<string | null>;
  /** Which of these nodes have a fresh heartbeat. */
  alive(nodes: readonly string[]): Promise<Set<string>>;
  /** Forget the node at once (a clean shutdown). */
  remove(node: string): Promise<void>;
  close(): Promise<void>;
}

/** Default heartbeat period; an entry lives NODE_STALE_BEATS periods (a node is dead after that). */
export const HEARTBEAT_MS = 5_000;
export const NODE_STALE_BEATS = 3;
/** A heartbeat older than this is a dead node (the default entry lifetime). */
export const NODE_STALE_MS = HEARTBEAT_MS * NODE_STALE_BEATS;

/** The directory entry of one node, as stored (JSON). */
export interface NodeEntry {
  url: string | null;
}

/** Parse a stored entry; null when it is not one (a corrupt entry counts as absent). */
export function parseNodeEntry(raw: string): NodeEntry | null {
  try {
    return decodeStored(StoredNodeEntry, raw, { kind: 'node directory entry' });
  } catch (err) {
    if (isStoredRecordError(err)) return null;
    throw err;
  }
}

export class MemoryNodeDirectory implements NodeDirectory {
  readonly #nodes = new Map<string, { url: string | null; until: number }>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  async announce(node: string, url: string | null, ttlMs = NODE_STALE_MS): Promise<void> {
    this.#nodes.set(node, { url, until: this.#now() + ttlMs });
  }

  #fresh(node: string): { url: string | null } | undefined {
    const entry = this.#nodes.get(node);
    return entry && this.#now() < entry.until ? entry : undefined;
  }

  async urlOf(node: string): Promise<string | null> {
    return this.#fresh(node)?.url ?? null;
  }

  async alive(nodes: readonly string[]): Promise<Set<string>> {
    return new Set(nodes.filter((n) => this.#fresh(n) !== undefined));
  }

  async remove(node: string): Promise<void> {
    this.#nodes.delete(node);
  }

  async close(): Promise<void> {}
}
