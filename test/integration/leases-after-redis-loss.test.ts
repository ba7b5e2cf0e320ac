/**
 * Redis comes back empty (its data lost): an acquire for a device that exists never answers
 * `404 NOT_FOUND` (a client would give up on it). Right after the loss it gets the device, or a
 * retryable error; with `waitSeconds` it gets the device — also through a node that never read the
 * device's record. A device removed on purpose is not mistaken for a lost one: it is 404 at once
 * on every node. (Through whole nodes: real adb servers, a simulated device, the lease HTTP API,
 * Redis leases and device records under a test prefix whose keys are deleted to stand in for the
 * loss.)
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeviceBridge, testDeviceBridge, timedRequest } from '../support/bridge.ts';

const prefix = `test:${randomUUID()}:`;
const QUIET = { DEVICEBRIDGE_HEALTH_INTERVAL_MS: '600000' };
let bridge: DeviceBridge;
let redis: Redis;

beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  // No health passes during the tests: the owner puts a lost record back when a test says so (its
  // match), as its next pass would.
  bridge = await testDeviceBridge({ simulate: 1, redisPrefix: prefix, env: QUIET });
}, 120_000);

/** Another node on the same Redis prefix, driving no device. */
const others: DeviceBridge[] = [];
async function otherNode(): Promise<DeviceBridge> {
  const node = await testDeviceBridge({ simulate: 0, redisPrefix: prefix, env: QUIET });
  others.push(node);
  return node;
}

afterAll(async () => {
  for (const node of others) await node.cleanup();
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

  it('a node started after the loss, before the owner put the record back, answers retryable, then gets the device', async () => {
    const [record] = await bridge.node.devices.list();
    const deviceId = record!.id;
    // A node that saw the store before the loss notices it first (its health pass).
    const witness = await otherNode();
    await witness.node.devices.list();
    await loseData();
    await witness.node.devices.match({ deviceId });
    // The owner has not put the record back yet; a node starts now and is asked for the device.
    const newcomer = await otherNode();
    expect((await redis.keys(`${prefix}*`)).filter((k) => k.includes(':device:'))).toEqual([]);
    const now = await timedRequest(newcomer.app, 'POST', '/v1/leases', { selector: { deviceId } });
    expect(now.status, JSON.stringify(now.body)).toBe(503);
    expect(now.body.error.retryable).toBe(true);
    const waited = timedRequest(newcomer.app, 'POST', '/v1/leases', {
      selector: { deviceId },
      waitSeconds: 20,
    });
    await bridge.node.devices.match({ deviceId }); // the owner's next pass puts the record back
    const got = await waited;
    expect(got.status, JSON.stringify(got.body)).toBe(201);
    expect((await timedRequest(newcomer.app, 'DELETE', `/v1/leases/${got.body.id}`)).status).toBe(200);
  }, 120_000);

  it('a device removed on purpose is NOT_FOUND at once on a node that had read its record', async () => {
    const [record] = await bridge.node.devices.list();
    const deviceId = record!.id;
    const reader = await otherNode();
    expect((await reader.node.devices.list()).map((r) => r.id)).toContain(deviceId);
    const removed = await timedRequest(bridge.app, 'DELETE', `/v1/devices/${encodeURIComponent(deviceId)}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(204);
    const asked = await timedRequest(reader.app, 'POST', '/v1/leases', { selector: { deviceId } });
    expect(asked.status, JSON.stringify(asked.body)).toBe(404);
    expect(asked.body.error.code).toBe('NOT_FOUND');
  }, 120_000);
});
