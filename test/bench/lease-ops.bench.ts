/**
 * lease-ops: full lease cycles per second on Redis from one process — LeaseManager.acquire +
 * LeaseManager.release as the application layer calls it (with the lease's device, which it has
 * read): nothing of the lease is on this node (`holdEmpty` holds), so the release ends the lease and
 * records its empty teardown in one script (release-empty), i.e. two Lua scripts per cycle and
 * nothing else (the wake-up is published only while a queue has waiters: here none). Set
 * LEASE_OPS_PATH=pending for the three-script path (release, teardown, record-teardown) of a node
 * that holds something of the lease — with CONCURRENCY cycles in flight on the store's own
 * connection (as in production: no auto-pipelining), each loop over its own few devices. Baseline, measured in the same run on its own connection with the same
 * concurrency: PING round trips per second (ratio = lease cycles / PINGs, so 0.33 would mean the
 * scripts cost no more than a PING each). lease-ops-memory: the same cycle on the memory store.
 * The lease and PING windows alternate (ROUNDS of each, after a warm-up), so each ratio compares
 * two windows measured under the same load; the figures are the medians (rates and ratios).
 * lease-ops-cpu: this process's CPU time per cycle (median), as a multiple of its CPU time per PING
 * (less sensitive to a loaded machine than the rates). lease-ops-memory is the best of ROUNDS windows. Needs Redis at REDIS_URL
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
/** Cycles in flight (LEASE_OPS_CONCURRENCY, default 16; e.g. 200 for a node with hundreds of callers). */
const CONCURRENCY = Number(process.env.LEASE_OPS_CONCURRENCY ?? 16);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1)
  throw new Error('LEASE_OPS_CONCURRENCY must be a positive integer');
const WINDOW_MS = 500;
const ROUNDS = 5;
/** LEASE_OPS_PATH=pending: the release path of a node that holds something of the lease. */
const PENDING_PATH = process.env.LEASE_OPS_PATH === 'pending';

/** CPU time (user + system, µs) this process spent per op in the last `rate` window. */
let lastCpuPerOp = 0;

/** Runs `op` in CONCURRENCY loops for windowMs; returns completed ops per second. */
async function rate(op: (loop: number) => Promise<void>, windowMs: number): Promise<number> {
  let done = 0;
  const cpu = process.cpuUsage();
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
  const elapsed = performance.now() - start;
  const used = process.cpuUsage(cpu);
  lastCpuPerOp = (used.user + used.system) / Math.max(1, done);
  return (done * 1000) / elapsed;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** ROUNDS alternating windows of `op` and `baseline`: the median rates and the median of the ratios. */
async function interleaved(
  op: (loop: number) => Promise<void>,
  baseline: (loop: number) => Promise<void>,
): Promise<{ rate: number; baseline: number; ratio: number; cpu: number; baselineCpu: number }> {
  await rate(op, 200);
  await rate(baseline, 200);
  const ops: number[] = [];
  const bases: number[] = [];
  const ratios: number[] = [];
  const cpus: number[] = [];
  const baseCpus: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const o = await rate(op, WINDOW_MS);
    cpus.push(lastCpuPerOp);
    const b = await rate(baseline, WINDOW_MS);
    baseCpus.push(lastCpuPerOp);
    ops.push(o);
    bases.push(b);
    ratios.push(o / b);
  }
  return {
    rate: median(ops),
    baseline: median(bases),
    ratio: median(ratios),
    cpu: median(cpus),
    baselineCpu: median(baseCpus),
  };
}

async function best(op: (loop: number) => Promise<void>): Promise<number> {
  await rate(op, 200);
  let top = 0;
  for (let i = 0; i < ROUNDS; i++) top = Math.max(top, await rate(op, WINDOW_MS));
  return top;
}

/** One lease cycle per call on loop `loop`'s own devices (also driven by lease-cycle-count.ts). */
export function cycle(store: LeaseStore): (loop: number) => Promise<void> {
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
    teardown: {
      closeLease: async () => ({ actions: [], failures: [] }),
      // A node that holds nothing of these leases (the lease-session room answers the same for them).
      ...(PENDING_PATH ? {} : { holdEmpty: () => () => undefined }),
    },
  });
  return async (loop) => {
    const lease = await manager.acquire({
      selector: { labels: { loop: String(loop) } },
      ttlSeconds: 60,
      tenant: 'bench',
      holder: 'bench',
    });
    await manager.release(lease.id, lease.fencingToken, lease);
  };
}

export async function bench(): Promise<BenchFigure[]> {
  const prefix = `bench:${randomUUID()}:`;
  const leaseClient = new Redis(REDIS_URL);
  const pingClient = new Redis(REDIS_URL);
  try {
    // The store's own connection, configured as in production.
    const redisStore = new RedisLeaseStore({ url: REDIS_URL, prefix });
    const redis = await interleaved(cycle(redisStore), async () => {
      await pingClient.ping();
    });
    await redisStore.close();
    const memoryOps = await best(cycle(new MemoryLeaseStore()));
    return [
      {
        bench: 'lease-ops',
        value: Math.round(redis.rate),
        unit: 'cycles/s',
        baseline: 'redis-ping',
        ratio: redis.ratio,
      },
      { bench: 'redis-ping', value: Math.round(redis.baseline), unit: 'ops/s', baseline: null, ratio: null },
      {
        // This process's CPU per cycle (less sensitive to a loaded machine than the rate), as PINGs.
        bench: 'lease-ops-cpu',
        value: Math.round(redis.cpu),
        unit: 'µs/cycle',
        baseline: 'redis-ping-cpu',
        ratio: redis.cpu / redis.baselineCpu,
      },
      {
        bench: 'redis-ping-cpu',
        value: Math.round(redis.baselineCpu * 10) / 10,
        unit: 'µs/op',
        baseline: null,
        ratio: null,
      },
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
