/**
 * Ghosts (issue #12): a device whose owner node's heartbeat expired reads `ownerless` and is never
 * leased; once its owner beats again it reads as stored. A bridge on real Redis (node-b, no devices)
 * next to a record of another node written straight into the shared device store.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisDeviceStore, RedisNodeDirectory } from '../../src/devices/redis-store.ts';
import { afterHealthPasses, type DeviceBridge, testDeviceBridge, timedRequest } from '../support/bridge.ts';
import { deviceRecord } from '../support/device-store-contract.ts';
import { deleteKeys, REDIS_URL } from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;

describe('a dead owner’s device reads ownerless', () => {
  const redis = new Redis(REDIS_URL);
  const store = new RedisDeviceStore({ client: redis, prefix });
  const directory = new RedisNodeDirectory({ client: redis, prefix });
  let b: DeviceBridge;

  beforeAll(async () => {
    b = await testDeviceBridge({ simulate: 0, redisPrefix: prefix, env: { DEVICEBRIDGE_NODE: 'node-b' } });
    // A device from node-gone's own devices file, which node-b was never configured with: node-b
    // never takes it over.
    await store.put(
      deviceRecord('dev-x', {
        ownerNode: 'node-gone',
        endpoint: '127.0.0.1:9',
        serial: '127.0.0.1:9',
        source: 'config',
        // node-gone recorded its baseline when the device joined the pool.
        baseline: { capturedAt: 1, packages: 0, files: 0, settings: 0, processes: 0 },
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await b?.cleanup();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  const stateOf = async () =>
    (await timedRequest(b.app, 'GET', '/v1/devices')).body['devices'].find(
      (d: { id: string }) => d.id === 'dev-x',
    )?.state;

  it('ownerless while the owner has no fresh heartbeat: listed so, never leased; as stored once it beats', async () => {
    expect(await stateOf()).toBe('ownerless');
    const refused = await timedRequest(b.app, 'POST', '/v1/leases', { selector: { deviceId: 'dev-x' } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);

    await directory.announce('node-gone', null, 2_000);
    expect(await stateOf()).toBe('online');
    const granted = await timedRequest(b.app, 'POST', '/v1/leases', { selector: { deviceId: 'dev-x' } });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);

    await directory.remove('node-gone');
    expect(await stateOf()).toBe('ownerless');
    // Health passes of node-b (two of them wholly after the owner left): it cannot reach dev-x.
    await afterHealthPasses(b.node.devices, 3);
    expect(await stateOf()).toBe('ownerless');
    // The stored record is untouched: ownerless is what readers derive, never written.
    expect((await store.get('dev-x'))?.state).toBe('online');
    // Its lease answers a lease-scoped call with a retryable UNAVAILABLE naming the dead owner.
    const call = await timedRequest(
      b.app,
      'GET',
      `/v1/leases/${granted.body['id']}/viewport?transport=one-shot`,
    );
    expect(call.status, JSON.stringify(call.body)).toBe(503);
    expect(call.body['error']).toMatchObject({
      code: 'UNAVAILABLE',
      retryable: true,
      details: { ownerNode: 'node-gone' },
    });
  }, 30_000);
});
