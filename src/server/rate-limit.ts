/**
 * Token-bucket rate limits kept in memory per node: `perMinute` events per key, refilled
 * continuously, bursting up to `perMinute`. Keys are a client address or a token's name; the map holds
 * only keys that used an event and is bounded (the least recently used keys are dropped first), so a
 * flood of addresses cannot grow it.
 * Pure: the clock is injected.
 */
import { BridgeError } from '../errors.ts';

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  readonly #perMinute: number;
  readonly #now: () => number;
  readonly #maxKeys: number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(perMinute: number, options: { now?: () => number; maxKeys?: number } = {}) {
    this.#perMinute = perMinute;
    this.#now = options.now ?? Date.now;
    this.#maxKeys = options.maxKeys ?? 10_000;
  }

  get enabled(): boolean {
    return this.#perMinute > 0;
  }

  /** `key`'s events now (refilled to the clock); a key never counted, or dropped, has them all. */
  #tokens(bucket: Bucket | undefined, now: number): number {
    if (bucket === undefined) return this.#perMinute;
    return Math.min(this.#perMinute, bucket.tokens + ((now - bucket.at) * this.#perMinute) / 60_000);
  }

  #wait(tokens: number): number {
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil(((1 - tokens) * 60) / this.#perMinute));
  }

  /**
   * Seconds until `key` may act again (0: it may now), without using up anything. Stores nothing: a
   * key is kept only once it used an event (asking for every caller would fill the map with keys
   * that never failed, and push the ones that did out of it).
   */
  retryAfter(key: string): number {
    if (!this.enabled) return 0;
    return this.#wait(this.#tokens(this.#buckets.get(key), this.#now()));
  }

  /** Use one event of `key`; returns the seconds to wait when there was none left (0: allowed). */
  take(key: string): number {
    if (!this.enabled) return 0;
    const now = this.#now();
    const tokens = this.#tokens(this.#buckets.get(key), now);
    const wait = this.#wait(tokens);
    // Re-insert: the map's order is least recently used first.
    this.#buckets.delete(key);
    this.#buckets.set(key, { tokens: wait === 0 ? tokens - 1 : tokens, at: now });
    while (this.#buckets.size > this.#maxKeys) this.#buckets.delete(this.#buckets.keys().next().value!);
    return wait;
  }

  get size(): number {
    return this.#buckets.size;
  }
}

/** The 429 answer: RATE_LIMITED with `Retry-After` (seconds) set by the error handler. */
export function rateLimited(what: string, retryAfterSeconds: number): BridgeError {
  return new BridgeError('RATE_LIMITED', `too many ${what}; retry after ${retryAfterSeconds} s`, {
    details: { retryAfterSeconds },
  });
}
