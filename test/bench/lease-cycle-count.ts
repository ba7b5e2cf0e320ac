/**
 * Scratch: run exactly N lease cycles (the lease-ops bench's cycle, 16 in flight) and exit — for
 * callgrind instruction counts (run twice with different N, take the difference per cycle).
 * N from argv[2]; REDIS_URL as the bench. PING=1: N PINGs instead (as the bench's baseline: a plain connection).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LeaseManager } from '../../src/leases/manager.ts';
import { RedisLeaseStore } from '../../src/leases/redis-store.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6391';
const N = Number(process.argv[2] ?? 1600);
const CONCURRENCY = 16;

async function main(): Promise<void> {
  const prefix = `bench:${randomUUID()}:`;
  const store = new RedisLeaseStore({ url: REDIS_URL, prefix });
  const ping = new Redis(REDIS_URL);
  const manager = new LeaseManager({
    store,
    node: 'bench',
    devices: {
      match: async (selector) => {
        const loop = Number(selector.labels?.loop);
        const devices = [`dev-${loop}-a`, `dev-${loop}-b`];
        return { matching: devices, available: devices };
      },
    },
    teardown: { closeLease: async () => ({ actions: [], failures: [] }), holdEmpty: () => () => undefined },
  });
  let left = N;
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, loop) => {
      while (left > 0) {
        left--;
        if (process.env.PING === '1') {
          await ping.ping();
          continue;
        }
        const lease = await manager.acquire({
          selector: { labels: { loop: String(loop) } },
          ttlSeconds: 60,
          tenant: 'bench',
          holder: 'bench',
        });
        await manager.release(lease.id, lease.fencingToken, lease);
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  process.stderr.write(
    `${N} ops, ${((used.user + used.system) / N).toFixed(1)} µs CPU/op (user ${(used.user / N).toFixed(1)}, sys ${(used.system / N).toFixed(1)})\n`,
  );
  const keys = await ping.keys(`${prefix}*`);
  for (let i = 0; i < keys.length; i += 1000) await ping.del(...keys.slice(i, i + 1000));
  await store.close();
  await ping.quit();
}

await main();
