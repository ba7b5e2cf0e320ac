/**
 * The node directory: which URL each bridge node answers on, so a node that does not drive a
 * device can hand a lease-scoped call to the node that does. Entries are refreshed by a heartbeat
 * and ignored once stale. Memory by default; on Redis (src/devices/redis-store.ts) for many nodes.
 */
export interface NodeDirectory {
  /** Record (or refresh) this node's URL. */
  announce(node: string, url: string): Promise<void>;
  /** The node's URL when its last heartbeat is fresh, else null. */
  urlOf(node: string): Promise<string | null>;
  close(): Promise<void>;
}

/** What a node name looks like (DEVICEBRIDGE_NODE, the data dir's `node-id`). */
export const NODE_NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** A heartbeat older than this is a dead node. */
export const NODE_STALE_MS = 30_000;

export class MemoryNodeDirectory implements NodeDirectory {
  readonly #nodes = new Map<string, { url: string; at: number }>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  async announce(node: string, url: string): Promise<void> {
    this.#nodes.set(node, { url, at: this.#now() });
  }

  async urlOf(node: string): Promise<string | null> {
    const entry = this.#nodes.get(node);
    return entry && this.#now() - entry.at < NODE_STALE_MS ? entry.url : null;
  }

  async close(): Promise<void> {}
}
