/**
 * A "bridge process" for the lease concurrency and restart tests, run as
 * `node --import tsx lease-worker.ts '<json config>'`. It builds a RedisLeaseStore + LeaseManager
 * (with its expiry loop) on the given prefix and then:
 *
 * - mode `churn`: runs `acquirers` concurrent loops for `durationMs`: acquire (waitSeconds 2) → check
 *   the fence → append `{deviceId, leaseId, token, start, end, expire}` to `leaseLog` (JSON lines,
 *   written synchronously, before the lease is given up) → hold a few ms → release, or (a fraction
 *   `expireFraction`) leave it to expire with a 1 s TTL, in which case `end` is its expiresAt.
 *   Every teardown this process runs is appended to `teardownLog`. Prints a JSON summary line.
 * - mode `hold`: acquires `count` leases (ttlSeconds `ttl`), prints them as one JSON line, then idles
 *   until killed.
 */
import { appendFileSync } from 'node:fs';
import { LeaseManager } from '../../../src/leases/manager.ts';
import { RedisLeaseStore } from '../../../src/leases/redis-store.ts';
import type { Lease } from '../../../src/leases/types.ts';

export interface WorkerConfig {
  mode: 'churn' | 'hold';
  redisUrl: string;
  prefix: string;
  node: string;
  devices: string[];
  teardownLog: string;
  leaseLog?: string;
  acquirers?: number;
  durationMs?: number;
  expireFraction?: number;
  count?: number;
  ttl?: number;
}

export interface LeaseLogLine {
  deviceId: string;
  leaseId: string;
  token: number;
  start: number;
  end: number;
  expire: boolean;
  node: string;
}

export interface TeardownLogLine {
  leaseId: string;
  deviceId: string;
  reason: string;
  node: string;
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const store = new RedisLeaseStore({ url: config.redisUrl, prefix: config.prefix });
const manager = new LeaseManager({
  store,
  node: config.node,
  pollMs: 20,
  expiryIntervalMs: 100,
  devices: {
    match: async () => {
      const shuffled = [...config.devices].sort(() => Math.random() - 0.5);
      return { matching: config.devices, available: shuffled };
    },
  },
  teardown: {
    closeLease: async (lease, reason) => {
      const line: TeardownLogLine = {
        leaseId: lease.id,
        deviceId: lease.deviceId,
        reason,
        node: config.node,
      };
      appendFileSync(config.teardownLog, `${JSON.stringify(line)}\n`);
      return { actions: ['noop'], failures: [] };
    },
  },
});
manager.start();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const selector = { labels: { pool: 'concurrency' } };

if (config.mode === 'hold') {
  const held: Lease[] = [];
  for (let i = 0; i < (config.count ?? 1); i++) {
    held.push(
      await manager.acquire({ selector, ttlSeconds: config.ttl ?? 3, tenant: 't', holder: config.node }),
    );
  }
  process.stdout.write(`${JSON.stringify(held)}\n`);
  setInterval(() => undefined, 60_000);
} else {
  const stats = {
    acquired: 0,
    conflicts: 0,
    fenceFailures: 0,
    // What each fence failure was and when (a 1 s lease can pass its TTL on a loaded machine).
    fenceFailureDetails: [] as string[],
    errors: [] as string[],
  };
  const until = Date.now() + (config.durationMs ?? 20_000);
  const leaseLog = config.leaseLog ?? '/dev/null';
  const loop = async (): Promise<void> => {
    while (Date.now() < until) {
      const expire = Math.random() < (config.expireFraction ?? 0.1);
      let lease: Lease;
      try {
        lease = await manager.acquire({
          selector,
          ttlSeconds: expire ? 1 : 5,
          waitSeconds: 2,
          tenant: 't',
          holder: config.node,
        });
      } catch (err) {
        if ((err as { code?: string }).code === 'CONFLICT') stats.conflicts++;
        else stats.errors.push(String(err));
        continue;
      }
      stats.acquired++;
      const start = Date.now();
      try {
        await manager.checkFence(lease.deviceId, lease.id, lease.fencingToken);
      } catch (err) {
        stats.fenceFailures++;
        stats.fenceFailureDetails.push(
          `${(err as { code?: string }).code ?? String(err)} ${Date.now() - lease.acquiredAt} ms after acquiredAt, ttl ${lease.ttlSeconds} s`,
        );
      }
      await sleep(1 + Math.floor(Math.random() * 15));
      const line: LeaseLogLine = {
        deviceId: lease.deviceId,
        leaseId: lease.id,
        token: lease.fencingToken,
        start,
        end: expire ? lease.expiresAt : Date.now(),
        expire,
        node: config.node,
      };
      appendFileSync(leaseLog, `${JSON.stringify(line)}\n`);
      if (!expire) {
        try {
          await manager.release(lease.id, lease.fencingToken);
        } catch (err) {
          stats.errors.push(`release: ${String(err)}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: config.acquirers ?? 1 }, loop));
  await manager.stop();
  await store.close();
  process.stdout.write(`${JSON.stringify(stats)}\n`);
}
