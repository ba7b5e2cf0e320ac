/**
 * RedisLeaseStore against the real Redis at 127.0.0.1:6379: the shared LeaseStore contract, the Lua
 * failure codes, hash-tagged keys, claimExpired racing across connections, and a store restart.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { LeaseFailure, leaseError } from '../../src/leases/errors.ts';
import { LeaseManager } from '../../src/leases/manager.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import { openLeaseStore } from '../../src/leases/open-store.ts';
import { scriptSources } from '../../src/leases/redis-scripts.ts';
import { HASH_TAG, RedisLeaseStore } from '../../src/leases/redis-store.ts';
import type { Lease } from '../../src/leases/types.ts';
import { StoredRecordError } from '../../src/stored-record.ts';
import { expectCode, FakeClock, leaseStoreContract, teardownOf } from '../support/leases-contract.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let client: Redis;
let prefix = '';
let stores = 0;
const extraClients: Redis[] = [];

beforeAll(() => {
  client = new Redis(REDIS_URL);
});
afterAll(async () => {
  await client.quit();
});

function newPrefix(): string {
  prefix = `test:${randomUUID()}:`;
  return prefix;
}
newPrefix();

async function keysUnder(p: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${p}*`, 'COUNT', 500);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

afterEach(async () => {
  const keys = await keysUnder(prefix);
  if (keys.length > 0) await client.del(...keys);
  await Promise.all(extraClients.splice(0).map((c) => c.quit()));
  newPrefix();
});

function connection(): Redis {
  const c = new Redis(REDIS_URL);
  extraClients.push(c);
  return c;
}

// Each store of a test gets its own sub-prefix of the test's prefix (model runs build many).
leaseStoreContract(
  'redis',
  async (options) => new RedisLeaseStore({ client, prefix: `${prefix}${stores++}:`, ...options }),
  { modelRuns: 25 },
);

/** Redis Cluster key slot (CRC16/XMODEM of the hash tag, or of the key when it has none). */
function keySlot(key: string): number {
  const open = key.indexOf('{');
  let hashed = key;
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) hashed = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

const req = { tenant: 't1', holder: 'h', ttlSeconds: 1, selector: { labels: { pool: 'x' } } };

describe('RedisLeaseStore', () => {
  it('fencing tokens stay monotonic per device across a Redis data loss, through every node (also one that never saw the device)', async () => {
    const clock = new FakeClock();
    // Three nodes on one prefix: the one that leases, the device's owner (only reads the lease), and
    // one that never saw the device.
    const acquirer = new RedisLeaseStore({ client, prefix, now: clock.now });
    const owner = new RedisLeaseStore({ client: connection(), prefix, now: clock.now });
    const stranger = new RedisLeaseStore({ client: connection(), prefix, now: clock.now });
    const nodes = [acquirer, owner, stranger];
    const handedOut: number[] = [];
    const cycle = async (store: RedisLeaseStore): Promise<number> => {
      const lease = await store.acquire({ ...req, ttlSeconds: 60, candidates: ['dev-1'] });
      if (lease === null) throw new Error('expected a lease');
      await store.release(lease.id);
      await store.recordTeardown(teardownOf(lease, clock));
      return lease.fencingToken;
    };
    for (let i = 0; i < 5; i++) handedOut.push(await cycle(acquirer));
    const held = await acquirer.acquire({ ...req, ttlSeconds: 60, candidates: ['dev-1'] });
    handedOut.push(held!.fencingToken);
    expect((await owner.get(held!.id))?.fencingToken).toBe(held!.fencingToken);
    expect(handedOut).toEqual([...handedOut].sort((a, b) => a - b));
    expect(new Set(handedOut).size).toBe(handedOut.length);

    // Redis loses the data (restarted empty, a flush), again and again: every node continues above
    // every token handed out before.
    for (const node of [stranger, owner, acquirer, stranger]) {
      await client.del(...(await keysUnder(prefix)));
      clock.advance(1); // the time Redis was gone
      const token = await cycle(node);
      expect(token).toBeGreaterThan(Math.max(...handedOut));
      expect(Number.isSafeInteger(token)).toBe(true);
      handedOut.push(token);
    }
    // Through every node without a loss: still one more each time.
    for (const node of nodes) {
      const token = await cycle(node);
      expect(token).toBeGreaterThan(Math.max(...handedOut));
      handedOut.push(token);
    }
  });

  it('every key it writes carries the one hash tag (one Cluster slot), queues and teardowns included', async () => {
    const clock = new FakeClock();
    const store = new RedisLeaseStore({ client, prefix, now: clock.now });
    const q = '["{odd}","a:b"]';
    await store.enqueue(q, 'w1', 30);
    await store.enqueue(q, 'w2', 30);
    const leases: Lease[] = [];
    for (const d of ['dev-1', 'dev:2', 'dev.3']) {
      const lease = await store.acquire({ ...req, candidates: [d] });
      if (lease) leases.push(lease);
    }
    const first = await store.acquire({ ...req, candidates: ['dev-4'], queueKey: q, waiterId: 'w1' });
    expect(first?.deviceId).toBe('dev-4');
    await store.release(leases[0]?.id ?? '');
    await store.recordTeardown(teardownOf(leases[0] as Lease, clock));
    await store.release(leases[1]?.id ?? ''); // its teardown due
    const keys = await keysUnder(prefix);
    expect(keys).toContain(`${prefix}${HASH_TAG}:teardowns-due`);
    expect(keys.length).toBeGreaterThanOrEqual(10);
    const slots = new Set(keys.map(keySlot));
    expect(slots.size).toBe(1);
    for (const key of keys) expect(key.startsWith(`${prefix}${HASH_TAG}:`)).toBe(true);
    expect(keySlot(`${prefix}${HASH_TAG}:x`)).toBe(keySlot('{leases}'));
    expect(() => new RedisLeaseStore({ client, prefix: 'bad{' })).toThrow(BridgeError);
  });

  it('the Redis layout, key by key and field by field, through acquire/release/teardown/queue', async () => {
    const clock = new FakeClock();
    const store = new RedisLeaseStore({ client, prefix, now: clock.now, retentionMs: 60_000 });
    const base = `${prefix}${HASH_TAG}:`;
    const q = '["pool=x"]';
    await store.enqueue(q, 'w1', 30);
    await store.enqueue(q, 'w2', 30);
    expect(await client.zrange(`${base}q:${q}`, '0', '-1')).toEqual(['w1', 'w2']);
    expect(await client.hgetall(`${base}qd:${q}`)).toEqual({
      w1: String(clock.t + 30_000),
      w2: String(clock.t + 30_000),
    });
    expect(await client.smembers(`${base}queues`)).toEqual([q]);
    expect(await client.get(`${base}qseq`)).toBe('2');

    const lease = await store.acquire({
      ...req,
      ttlSeconds: 10,
      candidates: ['d1'],
      queueKey: q,
      waiterId: 'w1',
    });
    if (!lease) throw new Error('expected a lease');
    expect(await client.hgetall(`${base}dev:d1`)).toEqual({
      fence: String(lease.fencingToken),
      lease: lease.id,
    });
    expect(await client.hgetall(`${base}lease:${lease.id}`)).toEqual({
      id: lease.id,
      deviceId: 'd1',
      tenant: 't1',
      holder: 'h',
      fencingToken: String(lease.fencingToken),
      acquiredAt: String(clock.t),
      expiresAt: String(clock.t + 10_000),
      ttlSeconds: '10',
      selector: JSON.stringify(req.selector),
      state: 'active',
    });
    expect(await client.zrange(`${base}active`, '0', '-1', 'WITHSCORES')).toEqual([
      lease.id,
      String(clock.t + 10_000),
    ]);
    expect(await client.zrange(`${base}q:${q}`, '0', '-1')).toEqual(['w2']);
    expect(await client.hkeys(`${base}qd:${q}`)).toEqual(['w2']);

    clock.advance(1_000);
    const endedAt = clock.t;
    await store.release(lease.id, lease.fencingToken, 'node-a#1');
    // The device keeps pointing at the ended lease until its teardown is recorded.
    expect(await client.hgetall(`${base}dev:d1`)).toEqual({
      fence: String(lease.fencingToken),
      lease: lease.id,
    });
    expect(await client.hmget(`${base}lease:${lease.id}`, 'state', 'endedAt', 'teardownBy')).toEqual([
      'released',
      String(clock.t),
      'node-a#1',
    ]);
    // Due for teardown, stamped (end, claimant); the lease never expires while it is due.
    expect(await client.zrange(`${base}teardowns-due`, '0', '-1', 'WITHSCORES')).toEqual([
      lease.id,
      String(clock.t),
    ]);
    expect(await client.pttl(`${base}lease:${lease.id}`)).toBe(-1);
    expect(await client.zcard(`${base}active`)).toBe(0);
    clock.advance(1_000);
    expect(await store.touchTeardown(lease.id, clock.t, 'node-b#1')).toBe(true);
    expect(await client.zscore(`${base}teardowns-due`, lease.id)).toBe(String(clock.t));
    expect(await client.hget(`${base}lease:${lease.id}`, 'teardownBy')).toBe('node-b#1');

    await store.recordTeardown(teardownOf(lease, clock));
    expect(await client.hgetall(`${base}dev:d1`)).toEqual({ fence: String(lease.fencingToken) });
    expect(JSON.parse((await client.get(`${base}td:${lease.id}`)) ?? 'null')).toEqual(
      teardownOf(lease, clock),
    );
    expect(await client.pttl(`${base}td:${lease.id}`)).toBeGreaterThan(50_000);
    // Recorded: no longer due (the empty zset is gone), and the ended lease expires after the retention.
    expect(await client.exists(`${base}teardowns-due`)).toBe(0);
    expect(await client.pttl(`${base}lease:${lease.id}`)).toBeGreaterThan(50_000);
    expect(await client.hget(`${base}lease:${lease.id}`, 'endedAt')).toBe(String(endedAt));

    // An expired lease ends the same way, through claim-expired.
    const second = await store.acquire({ ...req, ttlSeconds: 1, candidates: ['d1'] });
    clock.advance(1_000);
    expect((await store.claimExpired(clock.t, 10, 'node-c#1')).map((l) => l.id)).toEqual([second?.id]);
    expect(await client.hgetall(`${base}dev:d1`)).toEqual({
      fence: String(lease.fencingToken + 1),
      lease: second?.id,
    });
    expect(await client.hmget(`${base}lease:${second?.id}`, 'state', 'teardownBy')).toEqual([
      'expired',
      'node-c#1',
    ]);
    expect(await client.zrange(`${base}teardowns-due`, '0', '-1', 'WITHSCORES')).toEqual([
      second?.id,
      String(clock.t),
    ]);
    // A stalled claim re-stamps it in the same script.
    clock.advance(60_000);
    expect(
      (await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-d#1')).map((d) => d.claimant),
    ).toEqual(['node-c#1']);
    expect(await client.zscore(`${base}teardowns-due`, second?.id ?? '')).toBe(String(clock.t));
    expect(await client.hget(`${base}lease:${second?.id}`, 'teardownBy')).toBe('node-d#1');

    // The last waiter leaving drops the queue's keys and its entry in the set of queues.
    await store.dequeue(q, 'w2');
    expect(await client.exists(`${base}q:${q}`, `${base}qd:${q}`)).toBe(0);
    expect(await client.smembers(`${base}queues`)).toEqual([]);
    // waiting() drops a queue whose waiters all ran out.
    await store.enqueue(q, 'w3', 1);
    clock.advance(1_000);
    expect(await store.waiting()).toBe(0);
    expect(await client.exists(`${base}q:${q}`, `${base}qd:${q}`, `${base}queues`)).toBe(0);
  });

  it('one deferred teardown this version cannot read is reported on its own; the others still read', async () => {
    const clock = new FakeClock();
    const store = new RedisLeaseStore({ client, prefix, now: clock.now });
    const lease = await store.acquire({ ...req, candidates: ['d1'] });
    const ended = (await store.release(lease?.id ?? '')) as Lease;
    const item = {
      lease: ended,
      reason: 'released' as const,
      from: 'node-b',
      owner: 'node-a',
      deferredAt: clock.now(),
    };
    await store.deferTeardown(item);
    await client.hset(`${prefix}${HASH_TAG}:deferred`, 'lease-newer', '{"lease":{"id":"lease-newer"},"v":2}');
    expect(await store.deferredTeardowns()).toEqual({
      items: [item],
      invalid: [
        {
          leaseId: 'lease-newer',
          problem: 'deferred teardown lease-newer cannot be read: lease.deviceId is missing or invalid',
        },
      ],
    });
    expect(await store.takeDeferredTeardown('lease-newer')).toBe(true);
    expect((await store.deferredTeardowns()).invalid).toEqual([]);
  });

  it('a lease whose stored fields are the wrong shape is reported by id and field, never handed on; the others still read', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const store = new RedisLeaseStore({ client, prefix, logger });
    const bad = (await store.acquire({ ...req, candidates: ['d1'] })) as Lease;
    const good = (await store.acquire({ ...req, candidates: ['d2'] })) as Lease;
    // A selector whose labels are not a map (and hold a secret-looking value), a state no version writes.
    await client.hset(`${prefix}${HASH_TAG}:lease:${bad.id}`, 'selector', '{"labels":"s3cret-value"}');
    const read = store.get(bad.id);
    await expect(read).rejects.toBeInstanceOf(StoredRecordError);
    await expect(read).rejects.toMatchObject({
      code: 'INTERNAL',
      kind: 'lease',
      key: bad.id,
      field: 'selector.labels',
    });
    await expect(read).rejects.toThrow(
      `lease ${bad.id} cannot be read: selector.labels is missing or invalid`,
    );
    await expect(read).rejects.not.toThrow(/s3cret/);
    await client.hset(`${prefix}${HASH_TAG}:lease:${bad.id}`, 'selector', '{}', 'state', 'paused');
    await expect(store.get(bad.id)).rejects.toMatchObject({ key: bad.id, field: 'state' });
    // Listing skips it with a warning naming it; the good lease is still listed.
    await client.hset(
      `${prefix}${HASH_TAG}:lease:${bad.id}`,
      'selector',
      '{"labels":"s3cret-value"}',
      'state',
      'active',
    );
    expect((await store.list()).map((l) => l.id)).toEqual([good.id]);
    expect(lines.join('')).toContain(bad.id);
    expect(lines.join('')).not.toContain('s3cret');
  });

  it('Lua failure codes: check-fence replies -1/-4/-2/-3 and each maps through the one table', async () => {
    const clock = new FakeClock();
    const store = new RedisLeaseStore({ client, prefix, now: clock.now });
    const lease = await store.acquire({ ...req, ttlSeconds: 10, candidates: ['d1'] });
    if (!lease) throw new Error('expected a lease');
    const lua = scriptSources().get('check-fence') ?? '';
    const base = `${prefix}${HASH_TAG}:`;
    const run = (leaseId: string, deviceId: string, token: number, now: number) =>
      client.eval(lua, 2, `${base}lease:${leaseId}`, `${base}dev:${deviceId}`, deviceId, String(token), now);
    const token = lease.fencingToken;
    expect(await run('lease_none', 'd1', token, clock.t)).toBe(LeaseFailure.NotFound);
    expect(await run(lease.id, 'd2', token, clock.t)).toBe(LeaseFailure.WrongDevice);
    expect(await run(lease.id, 'd1', token + 1, clock.t)).toBe(LeaseFailure.FenceMismatch);
    expect(await run(lease.id, 'd1', token, clock.t + 10_000)).toBe(LeaseFailure.Ended);
    expect(Array.isArray(await run(lease.id, 'd1', token, clock.t))).toBe(true);
    const expected = {
      [-1]: 'NOT_FOUND',
      [-2]: 'LEASE_EXPIRED',
      [-3]: 'CONFLICT',
      [-4]: 'CONFLICT',
      [-5]: 'RATE_LIMITED',
    };
    for (const failure of Object.values(LeaseFailure))
      expect(leaseError(failure).code).toBe(expected[failure]);
    // The store surfaces them as BridgeErrors with details.
    const err = await expectCode(store.checkFence('d2', lease.id, token), 'CONFLICT');
    expect(err.details).toEqual({ leaseId: lease.id, deviceId: 'd2' });
  });

  it('survives SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
    const store = new RedisLeaseStore({ client, prefix });
    expect(await store.acquire({ ...req, candidates: ['d1'] })).not.toBeNull();
    await client.script('FLUSH');
    expect((await store.acquire({ ...req, candidates: ['d1', 'd2'] }))?.deviceId).toBe('d2');
  });

  it('one device, 40 concurrent acquires over 4 connections: exactly one wins', async () => {
    const stores = Array.from({ length: 4 }, () => new RedisLeaseStore({ client: connection(), prefix }));
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => stores[i % 4]?.acquire({ ...req, candidates: ['d1'] })),
    );
    expect(results.filter((r) => r)).toHaveLength(1);
  });

  it('claimExpired hands each lease to exactly one of two racing stores (two connections)', async () => {
    const clock = new FakeClock();
    const a = new RedisLeaseStore({ client: connection(), prefix, now: clock.now });
    const b = new RedisLeaseStore({ client: connection(), prefix, now: clock.now });
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const lease = await (i % 2 ? a : b).acquire({ ...req, ttlSeconds: 1 + (i % 3), candidates: [`d${i}`] });
      ids.push(lease?.id ?? '');
    }
    clock.advance(3_000);
    const drain = async (store: RedisLeaseStore): Promise<string[]> => {
      const got: string[] = [];
      for (;;) {
        const batch = await store.claimExpired(clock.t, 4);
        if (batch.length === 0) return got;
        got.push(...batch.map((l) => l.id));
      }
    };
    const [fromA, fromB] = await Promise.all([drain(a), drain(b)]);
    expect(fromA.length).toBeGreaterThan(0);
    expect(fromB.length).toBeGreaterThan(0);
    const all = [...fromA, ...fromB];
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(ids.sort());
  });

  it('claimStalledTeardowns hands each stalled teardown to exactly one of four racing stores (four connections)', async () => {
    const clock = new FakeClock();
    const stores = Array.from(
      { length: 4 },
      () => new RedisLeaseStore({ client: connection(), prefix, now: clock.now }),
    );
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const lease = (await stores[0]?.acquire({ ...req, ttlSeconds: 60, candidates: [`d${i}`] })) as Lease;
      await stores[0]?.release(lease.id, undefined, 'node-dead#1');
      ids.push(lease.id);
    }
    clock.advance(60_000);
    const drain = async (store: RedisLeaseStore, n: number): Promise<string[]> => {
      const got: string[] = [];
      for (;;) {
        const batch = await store.claimStalledTeardowns(clock.t, 60_000, 3, `node-${n}#1`);
        if (batch.length === 0) return got;
        got.push(...batch.map((d) => d.lease.id));
      }
    };
    const claims = await Promise.all(stores.map((store, n) => drain(store, n)));
    const all = claims.flat();
    expect(claims.filter((c) => c.length > 0).length).toBeGreaterThan(1);
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(ids.sort());
  });

  it('restart: a new store on a new connection sees the leases, and they expire exactly once', async () => {
    const clock = new FakeClock();
    const first = new RedisLeaseStore({ url: REDIS_URL, prefix, now: clock.now });
    const held: Lease[] = [];
    for (const d of ['d1', 'd2', 'd3']) {
      const lease = await first.acquire({ ...req, ttlSeconds: 30, candidates: [d] });
      if (lease) held.push(lease);
    }
    await first.close();
    await expect(first.get(held[0]?.id ?? '')).rejects.toThrow();

    const second = new RedisLeaseStore({ client: connection(), prefix, now: clock.now });
    const third = new RedisLeaseStore({ client: connection(), prefix, now: clock.now });
    for (const lease of held) {
      expect(await second.checkFence(lease.deviceId, lease.id, lease.fencingToken)).toEqual(lease);
    }
    expect((await third.list()).map((l) => l.id).sort()).toEqual(held.map((l) => l.id).sort());
    expect(await second.acquire({ ...req, candidates: ['d1', 'd2', 'd3'] })).toBeNull();
    clock.advance(30_000);
    const claims = await Promise.all([second.claimExpired(clock.t), third.claimExpired(clock.t)]);
    const claimed = claims.flat().map((l) => l.id);
    expect(claimed.sort()).toEqual(held.map((l) => l.id).sort());
    expect(await second.claimExpired(clock.t + 60_000)).toEqual([]);
  });
});

describe('LeaseManager on Redis: a teardown that did not finish is run again', () => {
  it('a lease ended by a node that crashed before its teardown ran: blocked, then torn down once by one of two nodes after the stale period', async () => {
    const clock = new FakeClock();
    const store = () => new RedisLeaseStore({ client: connection(), prefix, now: clock.now });
    const crashed = store();
    const lease = (await crashed.acquire({ ...req, ttlSeconds: 60, candidates: ['d1'] })) as Lease;
    await crashed.release(lease.id, undefined, 'node-a#1'); // then the process died
    const ran: string[] = [];
    const managers = ['node-b', 'node-c'].map(
      (node) =>
        new LeaseManager({
          store: store(),
          node,
          now: clock.now,
          stalledTeardownMs: 60_000,
          devices: {
            match: async () => ({ matching: ['d1'], available: ['d1'] }),
            ownerOf: async () => null,
          },
          teardown: {
            closeLease: async () => {
              ran.push(node);
              return { actions: ['reset device'], failures: [] };
            },
          },
        }),
    );
    clock.advance(59_999);
    expect(await Promise.all(managers.map((m) => m.resumeStalledOnce()))).toEqual([0, 0]);
    expect(await crashed.acquire({ ...req, candidates: ['d1'] })).toBeNull();
    clock.advance(1);
    const started = await Promise.all(managers.map((m) => m.resumeStalledOnce()));
    expect(started.sort()).toEqual([0, 1]);
    await Promise.all(managers.map((m) => m.stop())); // waits for the teardown it started
    expect(ran).toHaveLength(1);
    expect(await crashed.getTeardown(lease.id)).toMatchObject({
      node: ran[0],
      actions: ['teardown resumed: the earlier run on node node-a did not finish', 'reset device'],
    });
    expect(await client.exists(`${prefix}${HASH_TAG}:teardowns-due`)).toBe(0);
    expect((await crashed.acquire({ ...req, candidates: ['d1'] }))?.fencingToken).toBe(
      lease.fencingToken + 1,
    );
  });
});

describe('openLeaseStore', () => {
  it('opens the memory store without a Redis URL and the Redis store with one', async () => {
    const memory = await openLeaseStore({});
    expect(memory).toBeInstanceOf(MemoryLeaseStore);
    const redis = await openLeaseStore({ redisUrl: REDIS_URL, redisPrefix: prefix });
    expect(redis).toBeInstanceOf(RedisLeaseStore);
    const lease = await redis.acquire({ ...req, candidates: ['d1'] });
    expect((await client.hget(`${prefix}${HASH_TAG}:dev:d1`, 'lease')) ?? '').toBe(lease?.id);
    await redis.close();
  });
});

describe('teardown history index (batched trims)', () => {
  it('stays bounded at max + max/64 entries (every tenant and per tenant), keeps the newest, and lists as before', async () => {
    const clock = new FakeClock();
    const store = new RedisLeaseStore({ client, prefix, now: clock.now, teardownIndexMax: 128 });
    const sizes: number[] = [];
    const ended: string[] = [];
    for (let i = 0; i < 300; i++) {
      clock.advance(10);
      const lease = (await store.acquire({
        tenant: 't1',
        holder: 'h',
        ttlSeconds: 60,
        selector: {},
        candidates: ['d1'],
      })) as Lease;
      // Both recording paths index alike: the one-step release and record-teardown.
      if (i % 2 === 0) {
        await store.releaseEmpty(lease.id, lease.fencingToken, teardownOf(lease, clock, { actions: [] }));
      } else {
        await store.release(lease.id, lease.fencingToken);
        await store.recordTeardown(teardownOf(lease, clock));
      }
      ended.push(lease.id);
      sizes.push(await client.zcard(`${store.keyBase}tdi`), await client.zcard(`${store.keyBase}tdi:t1`));
    }
    expect(Math.max(...sizes)).toBe(128 + 2); // trimmed once it passes 128 + 128/64, back to 128
    expect(Math.min(...sizes.slice(260))).toBe(128);
    const newest = [...ended].reverse().slice(0, 100);
    expect((await store.listTeardowns({ limit: 100 })).map((e) => e.lease.id)).toEqual(newest);
    expect((await store.listTeardowns({ tenant: 't1', limit: 100 })).map((e) => e.lease.id)).toEqual(newest);
    // Entries past the retention are skipped by the reader whether or not a trim removed them yet.
    clock.advance(7 * 24 * 3600 * 1000 - 45); // the last 5 records are within the retention
    expect((await store.listTeardowns({ limit: 100 })).map((e) => e.lease.id)).toEqual(newest.slice(0, 5));
    await store.close();
  });
});
