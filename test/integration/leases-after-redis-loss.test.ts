/**
 * Redis comes back empty (its data lost): an acquire for a device that exists never answers
 * `404 NOT_FOUND` (a client would give up on it). Right after the loss it gets the device, or a
 * retryable error; with `waitSeconds` it gets the device. (Through a whole node: real adb server,
 * a simulated device, the lease HTTP API, Redis leases and device records under a test prefix whose
 * keys are deleted to stand in for the loss.)
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeviceBridge, testDeviceBridge, timedRequest } from '../support/bridge.ts';

const prefix = `test:${randomUUID()}:`;
let bridge: DeviceBridge;
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  bridge = await testDeviceBridge({ simulate: 1, redisPrefix: prefix });
}, 120_000);

afterAll(async () => {
  await bridge?.cleanup();
  await loseData().catch(() => undefined);
  await redis?.quit();
});

/** Delete every key of the test prefix: Redis restarted empty, as far as this node can tell. */
async function loseData(): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

const json = (method: string, path: string, body?: unknown) => timedRequest(bridge.app, method, path, body);

describe('acquire after Redis lost its data', () => {
  it('never answers NOT_FOUND for a device that exists; waitSeconds gets it', async () => {
    const [record] = await bridge.node.devices.list();
    const deviceId = record!.id;
    for (const selector of [{ deviceId }, {}]) {
      await loseData();
      const now = await json('POST', '/v1/leases', { selector });
      expect(now.status, JSON.stringify(now.body)).not.toBe(404);
      if (now.status === 201) await json('DELETE', `/v1/leases/${now.body.id}`);
      else {
        expect(now.status, JSON.stringify(now.body)).toBe(503);
        expect(now.body.error.retryable).toBe(true);
      }

      await loseData();
      const waited = await json('POST', '/v1/leases', { selector, waitSeconds: 20 });
      expect(waited.status, JSON.stringify(waited.body)).toBe(201);
      expect(waited.body.deviceId).toBe(deviceId);
      expect((await json('DELETE', `/v1/leases/${waited.body.id}`)).status).toBe(200);
    }
  }, 120_000);
});
