/**
 * Wake-ups across nodes without polling, through real processes on one Redis: two `serve`
 * processes share a key prefix, node A drives the only device, waiters queue on either node. A
 * release on A wakes the first waiter on B (Redis pub/sub; the poll is a 1 s safety net): B counts
 * what started each granting attempt, and waiters on both nodes are served in the order they queued.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLeaseStore } from '../../src/leases/redis-store.ts';
import { tempDir } from '../support/bridge.ts';
import { httpJson, metricSum, type ServeNode, startServeNode, stopServeNode } from '../support/fleet.ts';

const redisUrl = 'redis://127.0.0.1:6379';
const prefix = `test:${randomUUID()}:`;
const ROUNDS = 11;

describe('wake-ups across nodes (e2e, one Redis)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let a: ServeNode;
  let b: ServeNode;
  const store = new RedisLeaseStore({ url: redisUrl, prefix });

  /** Resolves once `count` waiters are queued (read from the shared store). */
  async function queued(count: number): Promise<void> {
    const until = Date.now() + 10_000;
    while ((await store.waiting()) < count) {
      if (Date.now() > until) throw new Error(`${count} waiters never queued`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  beforeAll(async () => {
    tmp = await tempDir();
    [a, b] = await Promise.all([
      startServeNode({ dataDir: `${tmp.dir}/a`, name: 'node-a', simulate: 1, redisUrl, prefix }),
      startServeNode({ dataDir: `${tmp.dir}/b`, name: 'node-b', simulate: 0, redisUrl, prefix }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((n) => stopServeNode(n)));
    await store.close();
    const redis = new Redis(redisUrl);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await tmp?.cleanup();
  }, 60_000);

  it(`a release on A wakes a waiter on B: its grants follow wake-ups, not the safety-net poll (${ROUNDS} rounds)`, async () => {
    const grants = async () => {
      const of = (after: string) => metricSum(b.url, 'devicebridge_lease_waiter_grants_total', { after });
      return { wakeUp: await of('wake-up'), poll: await of('poll'), joined: await of('joined') };
    };
    const before = await grants();
    let held = await httpJson(a.url, 'POST', '/v1/leases', { ttlSeconds: 60 });
    expect(held.status, JSON.stringify(held.json)).toBe(201);
    const latencies: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const waiter = httpJson(b.url, 'POST', '/v1/leases', { ttlSeconds: 60, waitSeconds: 20 });
      await queued(1);
      const released = await httpJson(a.url, 'DELETE', `/v1/leases/${held.json.id}`);
      expect(released.status, JSON.stringify(released.json)).toBe(200);
      const got = await waiter;
      expect(got.status, JSON.stringify(got.json)).toBe(201);
      expect(got.json.fencingToken).toBeGreaterThan(held.json.fencingToken);
      // From the release's answer to the waiter's answer (the grant may even beat the release's answer).
      latencies.push(got.at - released.at);
      held = got;
    }
    await httpJson(a.url, 'DELETE', `/v1/leases/${held.json.id}`);
    const after = await grants();
    const delta = {
      wakeUp: after.wakeUp - before.wakeUp,
      poll: after.poll - before.poll,
      joined: after.joined - before.joined,
    };
    latencies.sort((x, y) => x - y);
    process.stderr.write(
      `fleet-wakeups: grants on B ${JSON.stringify(delta)}; latencies ${latencies.map((l) => l.toFixed(1)).join(' ')} ms\n`,
    );
    expect(delta.wakeUp + delta.poll + delta.joined, 'every round granted on B').toBe(ROUNDS);
    // Without the pub/sub wake-up every round would be granted by the poll. With it, a poll grants
    // only when its timer fires between the release and the wake-up's arrival: a rare few.
    expect(delta.wakeUp, JSON.stringify(delta)).toBeGreaterThan(ROUNDS / 2);
  }, 90_000);

  it('serves waiters on both nodes in the order they queued (FIFO across nodes)', async () => {
    const held = await httpJson(a.url, 'POST', '/v1/leases', { ttlSeconds: 60 });
    expect(held.status, JSON.stringify(held.json)).toBe(201);
    const order: string[] = [];
    const waiters = (['b1', 'a2', 'b3', 'a4'] as const).map((name) => ({
      name,
      node: name[0] === 'a' ? a : b,
    }));
    const pending: Array<Promise<void>> = [];
    for (const [i, w] of waiters.entries()) {
      pending.push(
        httpJson(w.node.url, 'POST', '/v1/leases', { ttlSeconds: 60, waitSeconds: 30 }).then(async (got) => {
          expect(got.status, JSON.stringify(got.json)).toBe(201);
          order.push(w.name);
          // Hold briefly, then hand the device on (released through the other node).
          await new Promise((r) => setTimeout(r, 20));
          const other = w.node === a ? b : a;
          expect((await httpJson(other.url, 'DELETE', `/v1/leases/${got.json.id}`)).status).toBe(200);
        }),
      );
      await queued(i + 1);
    }
    expect((await httpJson(a.url, 'DELETE', `/v1/leases/${held.json.id}`)).status).toBe(200);
    await Promise.all(pending);
    expect(order).toEqual(['b1', 'a2', 'b3', 'a4']);
  }, 90_000);
});
