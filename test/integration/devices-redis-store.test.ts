/**
 * RedisDeviceStore against the real Redis at 127.0.0.1:6379, one random key prefix per test: the
 * shared DeviceStore contract, hash-tagged keys, compare-and-set across connections, a delete racing
 * an update, and who closes the connection.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryDeviceStore } from '../../src/devices/memory-store.ts';
import { MemoryNodeDirectory } from '../../src/devices/nodes.ts';
import { openDeviceStores } from '../../src/devices/open-store.ts';
import { RedisDeviceStore, RedisNodeDirectory } from '../../src/devices/redis-store.ts';
import { deviceStoreContract, deviceRecord as record } from '../support/device-store-contract.ts';

const URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

let admin: Redis;
let prefix: string;
const stores: RedisDeviceStore[] = [];

function open(): RedisDeviceStore {
  const store = new RedisDeviceStore({ url: URL, prefix });
  stores.push(store);
  return store;
}

async function keys(): Promise<string[]> {
  return (await admin.keys(`${prefix}*`)).sort();
}

let subStores = 0;

beforeEach(() => {
  admin = new Redis(URL);
  prefix = `test-${randomUUID()}:`;
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  const left = await admin.keys(`${prefix}*`);
  if (left.length > 0) await admin.del(...left);
  await admin.quit();
});

// Each store of a test gets its own sub-prefix of the test's prefix (the model test builds many),
// on the test's admin connection (close() leaves it open).
deviceStoreContract(
  'redis',
  async () => new RedisDeviceStore({ client: admin, prefix: `${prefix}${subStores++}:` }),
  { modelRuns: 25 },
);

describe('RedisDeviceStore', () => {
  it('CRUD with hash-tagged keys and an index', async () => {
    const store = open();
    expect(await store.get('a')).toBeNull();
    expect(await store.list()).toEqual([]);
    await store.put(record('b'));
    await store.put(record('a', { state: 'offline', labels: { pool: 'x' } }));
    expect(await store.get('a')).toEqual(record('a', { state: 'offline', labels: { pool: 'x' } }));
    expect((await store.list()).map((r) => r.id)).toEqual(['a', 'b']);
    expect(await keys()).toEqual([
      `${prefix}{devicebridge}:device:a`,
      `${prefix}{devicebridge}:device:b`,
      `${prefix}{devicebridge}:devices`,
    ]);
    // Every key hashes to the same Redis Cluster slot: the first {...} is the same tag.
    for (const key of await keys()) expect(/\{([^}]*)\}/.exec(key)?.[1], key).toBe('devicebridge');

    const updated = await store.update('a', (r) => ({
      ...r,
      state: 'quarantined',
      quarantineReason: 'admin',
    }));
    expect(updated?.quarantineReason).toBe('admin');
    expect((await store.get('a'))?.state).toBe('quarantined');

    expect(await store.delete('a')).toBe(true);
    expect(await store.delete('a')).toBe(false);
    expect(await store.get('a')).toBeNull();
    expect(await store.update('a', (r) => r)).toBeNull();
    expect((await store.list()).map((r) => r.id)).toEqual(['b']);
    expect(await admin.smembers(`${prefix}{devicebridge}:devices`)).toEqual(['b']);
  });

  it('generation: one key, hash-tagged; after Redis loses its data a reader that knew the old one makes a new one, afterLoss', async () => {
    const a = open();
    const b = open();
    const first = await a.generation();
    expect(await b.generation()).toEqual(first);
    expect(await keys()).toEqual([`${prefix}{devicebridge}:generation`]);
    await admin.del(...(await keys()));
    const after = await b.generation(first.id);
    expect(after.id).not.toBe(first.id);
    expect(after.afterLoss).toBe(true);
    expect(await a.generation(first.id)).toEqual(after);
    // A store found empty by a reader that knew none: a fresh store, not a loss.
    await admin.del(...(await keys()));
    expect((await a.generation()).afterLoss).toBe(false);
    // Two readers at once after a loss agree on one generation.
    await admin.del(...(await keys()));
    const [x, y] = await Promise.all([a.generation('old'), b.generation('old')]);
    expect(x).toEqual(y);
    await admin.set(`${prefix}{devicebridge}:generation`, '{"id":1}');
    await expect(a.generation()).rejects.toThrow(/generation .* cannot be read/);
  });

  it('two stores (two bridge nodes) see the same records', async () => {
    const a = open();
    const b = open();
    await a.put(record('d1'));
    expect((await b.get('d1'))?.properties).toEqual({ sdk: 34, model: 'Sim' });
    await b.update('d1', (r) => ({ ...r, labels: { pool: 'gpu' } }));
    expect((await a.get('d1'))?.labels).toEqual({ pool: 'gpu' });
  });

  it('update is atomic under concurrent updates from several connections', async () => {
    const nodes = [open(), open(), open(), open()];
    await nodes[0]!.put(record('hot'));
    const perNode = 25;
    await Promise.all(
      nodes.flatMap((store, n) =>
        Array.from({ length: perNode }, (_, i) =>
          store.update('hot', (r) => ({
            ...r,
            consecutiveFailures: r.consecutiveFailures + 1,
            helpers: {
              ...r.helpers,
              [`n${n}-${i}`]: { versionCode: i + 1, sha256: 'a'.repeat(64), checkedAt: n },
            },
          })),
        ),
      ),
    );
    const final = await nodes[1]!.get('hot');
    // Lost updates would show as a lower count.
    expect(final?.consecutiveFailures).toBe(nodes.length * perNode);
    expect(Object.keys(final?.helpers ?? {}).sort()).toEqual(
      nodes.flatMap((_, n) => Array.from({ length: perNode }, (_, i) => `n${n}-${i}`)).sort(),
    );
  });

  it('an update racing a delete does not resurrect the record', async () => {
    // On the admin connection, so a command sent from inside `change` reaches Redis after the
    // store's read and before its compare-and-set (one connection runs commands in order).
    const store = new RedisDeviceStore({ client: admin, prefix });
    await store.put(record('gone'));
    let deleted: Promise<number> | undefined;
    const result = await store.update('gone', (r) => {
      // Deleted between the read and the write.
      deleted = admin.del(`${prefix}{devicebridge}:device:gone`);
      return { ...r, state: 'offline' };
    });
    expect(await deleted).toBe(1);
    expect(result).toBeNull();
    expect(await store.get('gone')).toBeNull();
  });

  it('refuses a prefix that would break the hash tag; corrupt records are INTERNAL errors', async () => {
    expect(() => new RedisDeviceStore({ url: URL, prefix: 'a{b}:' })).toThrow(/must not contain/);
    const store = open();
    await admin.set(`${prefix}{devicebridge}:device:bad`, 'not json');
    await admin.sadd(`${prefix}{devicebridge}:devices`, 'bad');
    await expect(store.get('bad')).rejects.toMatchObject({ code: 'INTERNAL' });
    // Wrong-shaped JSON is named by key and field; a listing leaves it out and keeps the others.
    await store.put(record('good'));
    await admin.set(
      `${prefix}{devicebridge}:device:shape`,
      JSON.stringify({ ...record('shape'), labels: 7 }),
    );
    await admin.sadd(`${prefix}{devicebridge}:devices`, 'shape');
    await expect(store.get('shape')).rejects.toThrow(
      `device record ${prefix}{devicebridge}:device:shape cannot be read: labels is missing or invalid`,
    );
    expect((await store.list()).map((r) => r.id)).toEqual(['good']);
    expect(await admin.exists(`${prefix}{devicebridge}:device:shape`)).toBe(1);
  });

  it('uses a caller-owned client without closing it', async () => {
    const client = new Redis(URL);
    const store = new RedisDeviceStore({ client, prefix });
    await store.put(record('x'));
    await store.close();
    expect(await client.ping()).toBe('PONG');
    expect(await client.exists(`${prefix}{devicebridge}:device:x`)).toBe(1);
    await client.quit();
  });
});

describe('openDeviceStores', () => {
  it('opens memory stores without a Redis URL and Redis stores (prefixed, hash-tagged) with one', async () => {
    const memory = await openDeviceStores({});
    expect(memory.deviceStore).toBeInstanceOf(MemoryDeviceStore);
    expect(memory.nodes).toBeInstanceOf(MemoryNodeDirectory);
    const redis = await openDeviceStores({ redisUrl: URL, redisPrefix: prefix });
    expect(redis.deviceStore).toBeInstanceOf(RedisDeviceStore);
    expect(redis.nodes).toBeInstanceOf(RedisNodeDirectory);
    await redis.deviceStore.put(record('d1'));
    await redis.nodes.announce('node-a', 'http://127.0.0.1:1');
    expect(await keys()).toEqual([
      `${prefix}{devicebridge}:device:d1`,
      `${prefix}{devicebridge}:devices`,
      `${prefix}{devicebridge}:node:node-a`,
    ]);
    await Promise.all([redis.deviceStore.close(), redis.nodes.close()]);
  });
});
