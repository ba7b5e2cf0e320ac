/**
 * Console sessions in Redis (the lease store's Redis and key prefix): `<prefix>{console}:session:<digest>`
 * strings with a PX expiry, so a session opened on one node is honoured by every node of the fleet
 * and survives a restart. The key holds the sha256 of the session id, never the id. A touch is
 * `SET … PX … XX`: it never re-creates a session deleted meanwhile.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.ts';
import { closeRedis, openRedis } from '../redis/connection.ts';
import { KeySpace } from '../redis/keys.ts';
import type { SessionStore } from './session-store.ts';

export class RedisSessionStore implements SessionStore {
  readonly #client: Redis;
  readonly #space: KeySpace;

  constructor(options: { url: string; prefix: string; logger?: Logger }) {
    this.#space = new KeySpace(options.prefix, '{console}');
    this.#client = openRedis({
      url: options.url,
      role: 'console sessions',
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
  }

  #key(key: string): string {
    return this.#space.key('session', key);
  }

  get(key: string): Promise<string | null> {
    return this.#client.get(this.#key(key));
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.#client.set(this.#key(key), value, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async touch(key: string, value: string, ttlMs: number): Promise<boolean> {
    // XX: only if it still exists, so a DEL (sign-out) between a read and this write is not undone.
    const done = await this.#client.set(this.#key(key), value, 'PX', Math.max(1, Math.round(ttlMs)), 'XX');
    return done === 'OK';
  }

  async delete(key: string): Promise<void> {
    await this.#client.del(this.#key(key));
  }

  close(): Promise<void> {
    return closeRedis(this.#client);
  }
}
