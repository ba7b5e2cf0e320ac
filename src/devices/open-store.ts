import type { Logger } from '../observability/logger.ts';
import { MemoryDeviceStore } from './memory-store.ts';
import { MemoryNodeDirectory, type NodeDirectory } from './nodes.ts';
import type { DeviceStore } from './types.ts';

export interface OpenDeviceStoresOptions {
  /** `Config.redisUrl`: Redis when set, the in-process memory stores otherwise. */
  redisUrl?: string | undefined;
  /** `Config.redisPrefix` (the device store has no prefix of its own when absent). */
  redisPrefix?: string;
  /** Where Redis connection errors are logged (credentials never are). */
  logger?: Logger;
}

/**
 * The device store and the node directory the configuration asks for (the counterpart of
 * `openLeaseStore`). The Redis stores (and ioredis) are loaded only when a Redis URL is configured.
 */
export async function openDeviceStores(
  options: OpenDeviceStoresOptions = {},
): Promise<{ deviceStore: DeviceStore; nodes: NodeDirectory }> {
  if (options.redisUrl === undefined) {
    return { deviceStore: new MemoryDeviceStore(), nodes: new MemoryNodeDirectory() };
  }
  const { RedisDeviceStore, RedisNodeDirectory } = await import('./redis-store.ts');
  const common = {
    url: options.redisUrl,
    ...(options.redisPrefix === undefined ? {} : { prefix: options.redisPrefix }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  };
  return { deviceStore: new RedisDeviceStore(common), nodes: new RedisNodeDirectory(common) };
}
