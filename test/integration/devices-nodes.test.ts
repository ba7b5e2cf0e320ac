/**
 * The node directory (memory and real Redis): announce, look up, liveness that ends with the
 * heartbeat's TTL (Redis: on Redis's clock), removal at a clean shutdown, corrupt entries ignored.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryNodeDirectory, type NodeDirectory, parseNodeEntry } from '../../src/devices/nodes.ts';
import { RedisNodeDirectory } from '../../src/devices/redis-store.ts';
import { parseStrictJson } from '../../src/strict-json.ts';

const prefix = `test:${randomUUID()}:`;
const redis = new Redis('redis://127.0.0.1:6379');
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const [name, make] of [
  ['memory', () => new MemoryNodeDirectory()],
  ['redis', () => new RedisNodeDirectory({ client: redis, prefix })],
] as Array<[string, () => NodeDirectory]>) {
  describe(`${name} node directory`, () => {
    it('answers the latest URL while the heartbeat is fresh, then forgets the node', async () => {
      const dir = make();
      expect(await dir.urlOf('node-a')).toBeNull();
      await dir.announce('node-a', 'http://127.0.0.1:7100', 400);
      await dir.announce('node-a', 'http://127.0.0.1:7101', 400);
      expect(await dir.urlOf('node-a')).toBe('http://127.0.0.1:7101');
      expect(await dir.urlOf('node-b')).toBeNull();
      expect(await dir.alive(['node-a', 'node-b'])).toEqual(new Set(['node-a']));
      // Its 400 ms heartbeat runs out (the test's timeout bounds the wait).
      while ((await dir.urlOf('node-a')) !== null) await sleep(50);
      expect(await dir.alive(['node-a'])).toEqual(new Set());
      await dir.close();
    });

    it('a node alive without a URL yet is alive but not forwardable; removal ends it at once', async () => {
      const dir = make();
      await dir.announce('node-c', null, 60_000);
      expect(await dir.alive(['node-c'])).toEqual(new Set(['node-c']));
      expect(await dir.urlOf('node-c')).toBeNull();
      await dir.announce('node-c', 'http://127.0.0.1:7102', 60_000);
      expect(await dir.urlOf('node-c')).toBe('http://127.0.0.1:7102');
      await dir.remove('node-c');
      expect(await dir.alive(['node-c'])).toEqual(new Set());
      expect(await dir.alive([])).toEqual(new Set());
      await dir.close();
    });
  });
}

it('a redis directory ignores a corrupt entry', async () => {
  await redis.set(`${prefix}{devicebridge}:node:node-x`, 'not json');
  const dir = new RedisNodeDirectory({ client: redis, prefix });
  expect(await dir.urlOf('node-x')).toBeNull();
  expect(await dir.alive(['node-x'])).toEqual(new Set());
});

it('parseNodeEntry accepts only {url: string | null}', () => {
  expect(parseNodeEntry('{"url":"http://x"}')).toEqual({ url: 'http://x' });
  expect(parseNodeEntry('{"url":null}')).toEqual({ url: null });
  for (const raw of ['', 'null', '1', '{"url":1}', '{}', '[', '"x"'])
    expect(parseNodeEntry(raw), raw).toBeNull();
});

it('parseNodeEntry: any text gives an entry exactly when it is a JSON object whose url is a string or null', () => {
  fc.assert(
    fc.property(fc.oneof(fc.json(), fc.string()), (raw) => {
      let value: unknown;
      try {
        // Stored entries are read with the strict parser (no duplicate or prototype keys).
        value = parseStrictJson(raw);
      } catch {
        value = undefined;
      }
      const url = (value as { url?: unknown } | null)?.url;
      const ok = typeof value === 'object' && value !== null && (url === null || typeof url === 'string');
      expect(parseNodeEntry(raw)).toEqual(ok ? { url } : null);
    }),
    { numRuns: 500 },
  );
});
