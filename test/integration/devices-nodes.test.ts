/** The node directory (memory and real Redis): announce, look up, and stale heartbeats ignored. */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryNodeDirectory, NODE_STALE_MS, type NodeDirectory } from '../../src/devices/nodes.ts';
import { RedisNodeDirectory } from '../../src/devices/redis-store.ts';

const prefix = `test:${randomUUID()}:`;
const redis = new Redis('redis://127.0.0.1:6379');
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

for (const [name, make] of [
  ['memory', (now: () => number) => new MemoryNodeDirectory({ now })],
  ['redis', (now: () => number) => new RedisNodeDirectory({ client: redis, prefix, now })],
] as Array<[string, (now: () => number) => NodeDirectory]>) {
  describe(`${name} node directory`, () => {
    it('answers the latest URL while the heartbeat is fresh, then forgets the node', async () => {
      let clock = 1_000_000;
      const dir = make(() => clock);
      expect(await dir.urlOf('node-a')).toBeNull();
      await dir.announce('node-a', 'http://127.0.0.1:7100');
      await dir.announce('node-a', 'http://127.0.0.1:7101');
      expect(await dir.urlOf('node-a')).toBe('http://127.0.0.1:7101');
      expect(await dir.urlOf('node-b')).toBeNull();
      clock += NODE_STALE_MS - 1;
      expect(await dir.urlOf('node-a')).toBe('http://127.0.0.1:7101');
      clock += 2;
      expect(await dir.urlOf('node-a')).toBeNull();
      await dir.close();
    });
  });
}

it('a redis directory ignores a corrupt entry', async () => {
  await redis.hset(`${prefix}{devicebridge}:nodes`, 'node-x', 'not json');
  expect(await new RedisNodeDirectory({ client: redis, prefix }).urlOf('node-x')).toBeNull();
});
