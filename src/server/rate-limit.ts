/**
 * Token-bucket rate limits kept in memory per node: `perMinute` events per key, refilled
 * continuously, bursting up to `perMinute`. Keys are a client address or a token's name; the map is
 * bounded (the least recently refilled keys are dropped first), so a flood of addresses cannot grow it.
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

  #bucket(key: string): Bucket {
    const now = this.#now();
    const found = this.#buckets.get(key);
    const bucket = found ?? { tokens: this.#perMinute, at: now };
    bucket.tokens = Math.min(this.#perMinute, bucket.tokens + ((now - bucket.at) * this.#perMinute) / 60_000);
    bucket.at = now;
    // Re-insert: the map's order is least recently used first.
    this.#buckets.delete(key);
    this.#buckets.set(key, bucket);
    while (this.#buckets.size > this.#maxKeys) this.#buckets.delete(this.#buckets.keys().next().value!);
    return bucket;
  }

  /** Seconds until `key` may act again (0: it may now), without using up anything. */
  retryAfter(key: string): number {
    if (!this.enabled) return 0;
    const bucket = this.#bucket(key);
    return bucket.tokens >= 1 ? 0 : Math.max(1, Math.ceil(((1 - bucket.tokens) * 60) / this.#perMinute));
  }

  /** Use one event of `key`; returns the seconds to wait when there was none left (0: allowed). */
  take(key: string): number {
    if (!this.enabled) return 0;
    const wait = this.retryAfter(key);
    if (wait === 0) this.#bucket(key).tokens -= 1;
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
