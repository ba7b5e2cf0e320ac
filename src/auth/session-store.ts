/**
 * Where console sessions live: a small key → value store with a TTL per entry. The memory store is
 * this node's (the embedded default, bounded, least recently used first out); with Redis configured
 * the sessions live there (./redis-session-store.ts), beside the leases, so every node of a fleet
 * honours a session opened on any of them. Keys are digests of session ids, never the ids.
 */

export interface SessionStore {
  /** The value under `key`, or null when absent or expired. */
  get(key: string): Promise<string | null>;
  /** Store `value` under `key` for `ttlMs`. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /**
   * Replace the value under `key` and its TTL only if `key` exists (atomically: a delete is never
   * undone); whether it did.
   */
  touch(key: string, value: string, ttlMs: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/** Most sessions the memory store keeps at once; the least recently used goes first. */
export const MAX_MEMORY_SESSIONS = 10_000;

export class MemorySessionStore implements SessionStore {
  readonly #entries = new Map<string, { value: string; until: number }>();
  readonly #now: () => number;
  readonly #max: number;

  constructor(options: { now?: () => number; max?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#max = options.max ?? MAX_MEMORY_SESSIONS;
  }

  async get(key: string): Promise<string | null> {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    if (entry.until <= this.#now()) {
      this.#entries.delete(key);
      return null;
    }
    // Re-insert: Map order is the eviction order (least recently used first).
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#entries.delete(key);
    this.#entries.set(key, { value, until: this.#now() + ttlMs });
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  async touch(key: string, value: string, ttlMs: number): Promise<boolean> {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.until <= this.#now()) return false;
    await this.set(key, value, ttlMs);
    return true;
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
