/**
 * Scratch: run exactly N lease cycles (the lease-ops bench's cycle, 16 in flight) and exit — for
 * callgrind instruction counts (run twice with different N, take the difference per cycle). The
 * cycle is the bench's own (`cycle` of lease-ops.bench.ts, the release-empty path).
 * N from argv[2]; REDIS_URL as the bench. PING=1: N PINGs instead (as the bench's baseline: a plain connection).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisLeaseStore } from '../../src/leases/redis-store.ts';
import { cycle } from './lease-ops.bench.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const N = Number(process.argv[2] ?? 1600);
const CONCURRENCY = 16;

async function main(): Promise<void> {
  const prefix = `bench:${randomUUID()}:`;
  const store = new RedisLeaseStore({ url: REDIS_URL, prefix });
  const ping = new Redis(REDIS_URL);
  const one = cycle(store);
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
        await one(loop);
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
