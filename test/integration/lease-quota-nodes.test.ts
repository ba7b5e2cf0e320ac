/**
 * Tenant quotas hold across bridge nodes: two LeaseManagers (two nodes, each with its own Redis
 * connection) share one real Redis prefix; one tenant's requests race on both at once. The store
 * checks and counts the tenant's leases (and queued waiters) in the same atomic step that grants
 * (or queues), so no interleaving of the nodes lets more than the quota through.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { LeaseManager } from '../../src/leases/manager.ts';
import { RedisLeaseStore } from '../../src/leases/redis-store.ts';
import type { Lease } from '../../src/leases/types.ts';
import { waitFor } from '../support/wait-for.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUOTA = 3;

let prefix = '';
const stores: RedisLeaseStore[] = [];
const managers: LeaseManager[] = [];

afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop().catch(() => undefined);
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
  const client = new Redis(REDIS_URL);
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
  await client.quit();
});

/** Two nodes on one prefix, each matching every device of `devices` (shuffled, as a fleet would). */
function twoNodes(devices: string[]): { nodes: LeaseManager[]; store: RedisLeaseStore } {
  prefix = `test:${randomUUID()}:`;
  for (const node of ['node-a', 'node-b']) {
    const store = new RedisLeaseStore({ url: REDIS_URL, prefix });
    stores.push(store);
    managers.push(
      new LeaseManager({
        store,
        node,
        pollMs: 50,
        devices: {
          match: async () => ({
            matching: devices,
            available: [...devices].sort(() => Math.random() - 0.5),
          }),
        },
        teardown: { closeLease: async () => ({ actions: [], failures: [] }) },
      }),
    );
  }
  return { nodes: managers.slice(-2), store: stores[0]! };
}

function refusedFor(err: unknown, quota: string): boolean {
  return err instanceof BridgeError && err.code === 'RATE_LIMITED' && err.details?.['quota'] === quota;
}

describe('tenant quotas across two nodes on one Redis', () => {
  it(`${4 * QUOTA} concurrent acquires over both nodes grant exactly the lease quota ${QUOTA}`, async () => {
    const devices = Array.from({ length: 4 * QUOTA }, (_, i) => `dev-${i}`);
    const { nodes, store } = twoNodes(devices);
    for (let round = 0; round < 3; round++) {
      const attempts = Array.from({ length: 4 * QUOTA }, (_, i) =>
        nodes[i % 2]!.acquire({
          tenant: 'acme',
          holder: `worker-${i}`,
          selector: {},
          ttlSeconds: 60,
          waitSeconds: 0,
          quota: { leases: QUOTA, waiters: 100 },
        }),
      );
      const settled = await Promise.allSettled(attempts);
      const granted = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []));
      expect(granted.length, `round ${round}: leases granted`).toBe(QUOTA);
      expect(refused.every((err) => refusedFor(err, 'leases'))).toBe(true);
      expect((refused[0] as BridgeError).message).toContain(`its quota is ${QUOTA}`);
      expect((await store.list({ tenant: 'acme' })).length).toBe(QUOTA);
      // Released (on either node), the quota has room again for the next round.
      await Promise.all(
        granted.map((lease: Lease, i) => nodes[i % 2]!.release(lease.id, lease.fencingToken)),
      );
      expect(await store.list({ tenant: 'acme' })).toEqual([]);
    }
  });

  it(`${4 * QUOTA} concurrent waits over both nodes queue at most the waiter quota ${QUOTA}`, async () => {
    const { nodes, store } = twoNodes(['only']);
    // Another tenant holds the one device: every acme request waits.
    const held = await nodes[0]!.acquire({
      tenant: 'globex',
      holder: 'h',
      selector: {},
      ttlSeconds: 60,
      waitSeconds: 0,
    });
    const stop = new AbortController();
    let refusals = 0;
    const waits = Array.from({ length: 4 * QUOTA }, (_, i) =>
      nodes[i % 2]!.acquire({
        tenant: 'acme',
        holder: `worker-${i}`,
        selector: {},
        ttlSeconds: 60,
        waitSeconds: 60,
        signal: stop.signal,
        quota: { leases: 100, waiters: QUOTA },
      }).then(
        () => 'granted',
        (err: unknown) => {
          if (refusedFor(err, 'waiters')) refusals += 1;
          return 'ended';
        },
      ),
    );
    try {
      // Every request has either been refused or joined the queue.
      const queued = await waitFor(
        async () => {
          const n = (await store.listWaiters({ tenant: 'acme' })).length;
          return n + refusals === 4 * QUOTA ? n : false;
        },
        { what: 'every acme request refused or queued' },
      );
      expect(queued).toBe(QUOTA);
      expect(refusals).toBe(3 * QUOTA);
    } finally {
      stop.abort();
      await Promise.all(waits);
      await nodes[0]!.release(held.id, held.fencingToken);
    }
  });
});
