/**
 * lease-ops: full lease cycles per second on Redis from one process — LeaseManager.acquire +
 * LeaseManager.release (store release, no-op teardown, teardown record that frees the device), i.e.
 * three Lua scripts per cycle — with CONCURRENCY cycles in flight on the store's own
 * (auto-pipelining) connection, each loop over its own few devices. Baseline, measured in the same run on its own connection with the same
 * concurrency: PING round trips per second (ratio = lease cycles / PINGs, so 0.33 would mean the
 * scripts cost no more than a PING each). lease-ops-memory: the same cycle on the memory store.
 * Each figure is the best of ROUNDS timed windows after a warm-up. Needs Redis at REDIS_URL
 * (default redis://127.0.0.1:6379); keys live under a random prefix and are deleted afterwards.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LeaseManager } from '../../src/leases/manager.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import { RedisLeaseStore } from '../../src/leases/redis-store.ts';
import type { LeaseStore } from '../../src/leases/types.ts';
import type { BenchFigure } from './run.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONCURRENCY = 16;
const WINDOW_MS = 700;
const ROUNDS = 3;

/** Runs `op` in CONCURRENCY loops for windowMs; returns completed ops per second. */
async function rate(op: (loop: number) => Promise<void>, windowMs: number): Promise<number> {
  let done = 0;
  const start = performance.now();
  const until = start + windowMs;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, loop) => {
      while (performance.now() < until) {
        await op(loop);
        done++;
      }
    }),
  );
  return (done * 1000) / (performance.now() - start);
}

async function best(op: (loop: number) => Promise<void>): Promise<number> {
  await rate(op, 200);
  let top = 0;
  for (let i = 0; i < ROUNDS; i++) top = Math.max(top, await rate(op, WINDOW_MS));
  return top;
}

function cycle(store: LeaseStore): (loop: number) => Promise<void> {
  const devicesOf = (loop: number) => [`dev-${loop}-a`, `dev-${loop}-b`];
  const manager = new LeaseManager({
    store,
    node: 'bench',
    devices: {
      match: async (selector) => {
        const devices = devicesOf(Number(selector.labels?.loop));
        return { matching: devices, available: devices };
      },
    },
    teardown: { closeLease: async () => ({ actions: [], failures: [] }) },
  });
  return async (loop) => {
    const lease = await manager.acquire({
      selector: { labels: { loop: String(loop) } },
      ttlSeconds: 60,
      tenant: 'bench',
      holder: 'bench',
    });
    await manager.release(lease.id, lease.fencingToken);
  };
}

export async function bench(): Promise<BenchFigure[]> {
  const prefix = `bench:${randomUUID()}:`;
  const leaseClient = new Redis(REDIS_URL);
  const pingClient = new Redis(REDIS_URL);
  try {
    // The store's own connection, configured as in production.
    const redisStore = new RedisLeaseStore({ url: REDIS_URL, prefix });
    const leaseOps = await best(cycle(redisStore));
    const pings = await best(async () => {
      await pingClient.ping();
    });
    await redisStore.close();
    const memoryOps = await best(cycle(new MemoryLeaseStore()));
    return [
      {
        bench: 'lease-ops',
        value: Math.round(leaseOps),
        unit: 'cycles/s',
        baseline: 'redis-ping',
        ratio: leaseOps / pings,
      },
      { bench: 'redis-ping', value: Math.round(pings), unit: 'ops/s', baseline: null, ratio: null },
      {
        bench: 'lease-ops-memory',
        value: Math.round(memoryOps),
        unit: 'cycles/s',
        baseline: null,
        ratio: null,
      },
    ];
  } finally {
    let cursor = '0';
    do {
      const [next, keys] = await leaseClient.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await leaseClient.del(...keys);
    } while (cursor !== '0');
    await Promise.all([leaseClient.quit(), pingClient.quit()]);
  }
}
