import type { Logger } from '../observability/logger.ts';
import { MemoryLeaseStore } from './memory-store.ts';
import type { LeaseStore } from './types.ts';

export interface OpenLeaseStoreOptions {
  /** `Config.redisUrl`: Redis when set, the in-process memory store otherwise. */
  redisUrl?: string | undefined;
  /** Redis key prefix (default `devicebridge:`). */
  redisPrefix?: string;
  /** Where Redis connection errors are logged (credentials never are). */
  logger?: Logger;
}

/**
 * The lease store the configuration asks for. The Redis store (and ioredis) is loaded only when a
 * Redis URL is configured.
 */
export async function openLeaseStore(options: OpenLeaseStoreOptions = {}): Promise<LeaseStore> {
  if (options.redisUrl === undefined) return new MemoryLeaseStore();
  const { RedisLeaseStore } = await import('./redis-store.ts');
  return new RedisLeaseStore({
    url: options.redisUrl,
    ...(options.redisPrefix === undefined ? {} : { prefix: options.redisPrefix }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
}
