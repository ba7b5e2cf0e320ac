/**
 * The shared Redis layer against the real Redis at 127.0.0.1:6379 (and a closed loopback port): the
 * connection factory's error log, and both stores' scripts on one connection through the one loader.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEVICE_SCRIPT_DIR, DEVICE_SCRIPT_NAMES, RedisDeviceStore } from '../../src/devices/redis-store.ts';
import { BridgeError } from '../../src/errors.ts';
import { LEASE_SCRIPT_DIR, SCRIPT_NAMES } from '../../src/leases/redis-scripts.ts';
import { RedisLeaseStore } from '../../src/leases/redis-store.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { COMMAND_TIMEOUT_MS, closeRedis, openRedis } from '../../src/redis/connection.ts';
import { loadScripts } from '../../src/redis/script-loader.ts';
import { deviceRecord } from '../support/device-store-contract.ts';

const URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

let admin: Redis;
let prefix: string;

beforeEach(() => {
  admin = new Redis(URL);
  prefix = `test-${randomUUID()}:`;
});
afterEach(async () => {
  const left = await admin.keys(`${prefix}*`);
  if (left.length > 0) await admin.del(...left);
  await admin.quit();
});

describe('openRedis', () => {
  it('logs a connection failure once per distinct error, with the URL stripped of its credentials', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const port = await closedPort();
    const client = openRedis({
      url: `redis://alice:s3cret-pw@127.0.0.1:${port}/0`,
      role: 'leases',
      logger,
      // Three quick attempts, then give up; commands fail instead of waiting.
      options: { maxRetriesPerRequest: 0, retryStrategy: (times) => (times < 3 ? 5 : null) },
    });
    await expect(client.ping()).rejects.toThrow();
    await new Promise<void>((resolve) => {
      if (client.status === 'end') resolve();
      else client.once('end', () => resolve());
    });
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const errors = entries.filter((e) => e['msg'] === 'redis connection error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      level: 40,
      role: 'leases',
      redis: `redis://***@127.0.0.1:${port}/0`,
      err: expect.stringContaining('ECONNREFUSED'),
    });
    expect(lines.join('\n')).not.toMatch(/s3cret|alice/);
    await closeRedis(client);
  });
});

describe('openRedis while Redis is unreachable', () => {
  it('fails fast with UNAVAILABLE (retryable) naming Redis and the role, commands, scripts and MULTI alike; Redis error replies pass unchanged', async () => {
    const port = await closedPort();
    const url = `redis://127.0.0.1:${port}`;
    const logger = createLogger('silent');
    const client = openRedis({ url, role: 'leases', logger });
    const store = new RedisLeaseStore({ url, prefix: `test:${randomUUID()}:`, logger });
    try {
      for (const [what, call] of [
        ['ping', () => client.ping()],
        ['script', () => store.list()],
        ['multi', () => store.takeDeviceState('lease_x')],
        ['hmget', () => store.get('lease_x')],
      ] as const) {
        const started = performance.now();
        const err = await (call as () => Promise<unknown>)().then(
          () => new Error(`${what} resolved`),
          (e: unknown) => e,
        );
        expect(err, what).toBeInstanceOf(BridgeError);
        expect((err as BridgeError).code, what).toBe('UNAVAILABLE');
        expect((err as BridgeError).retryable, what).toBe(true);
        expect((err as BridgeError).message, what).toContain(`Redis (leases) at ${url}`);
        expect(performance.now() - started, what).toBeLessThan(COMMAND_TIMEOUT_MS + 500);
      }
    } finally {
      await store.close();
      await closeRedis(client);
    }
    const live = openRedis({ url: URL, role: 'leases', logger });
    try {
      const reply = await live.call('NO-SUCH-COMMAND').then(
        () => null,
        (e: unknown) => e,
      );
      expect(reply).not.toBeInstanceOf(BridgeError);
      expect((reply as Error).message).toMatch(/unknown command/i);
    } finally {
      await closeRedis(live);
    }
  });
});

describe('one connection, both stores', () => {
  it('runs the lease and device scripts on a shared client; EVALSHA finds them by the loader sha', async () => {
    const client = new Redis(URL);
    try {
      const leases = new RedisLeaseStore({ client, prefix });
      const devices = new RedisDeviceStore({ client, prefix });
      // A second store on the same client runs the same scripts.
      const devicesAgain = new RedisDeviceStore({ client, prefix });
      await devices.put(deviceRecord('d1'));
      expect((await devicesAgain.get('d1'))?.id).toBe('d1');
      expect(
        await leases.acquire({ candidates: ['d1'], tenant: 't', holder: 'h', ttlSeconds: 5, selector: {} }),
      ).toMatchObject({ deviceId: 'd1' });
      const shas = [
        loadScripts(LEASE_SCRIPT_DIR, SCRIPT_NAMES).get('acquire')?.sha,
        loadScripts(DEVICE_SCRIPT_DIR, DEVICE_SCRIPT_NAMES).get('put')?.sha,
      ];
      expect(await admin.script('EXISTS', ...(shas as string[]))).toEqual([1, 1]);
      // After SCRIPT FLUSH the device scripts come back through EVAL as well.
      await admin.script('FLUSH');
      expect(await devices.update('d1', (r) => ({ ...r, state: 'offline' }))).toMatchObject({
        state: 'offline',
      });
      expect(await devices.delete('d1')).toBe(true);
    } finally {
      await client.quit();
    }
  });
});
