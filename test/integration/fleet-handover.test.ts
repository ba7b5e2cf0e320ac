/**
 * Handover at a clean shutdown (issue #12): a tunnel registered through node-a's API (so for the
 * whole fleet) is driven by node-a; node-a shuts down cleanly and leaves the node directory at once;
 * node-b, which never registered the tunnel itself but may reach it (its tunnel allowlist), takes it
 * over within a few health passes and drives it; the lease taken before keeps its fencing token.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { type DeviceBridge, testDeviceBridge, timedRequest } from '../support/bridge.ts';
import { deleteKeys, REDIS_URL } from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;
const fleetEnv = (name: string) => ({ DEVICEBRIDGE_NODE: name, DEVICEBRIDGE_HEARTBEAT_MS: '500' });

describe('a clean shutdown hands an API-registered device over', () => {
  const redis = new Redis(REDIS_URL);
  let sim: Simulator;
  let a: DeviceBridge | undefined;
  let b: DeviceBridge;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, count: 1 });
    a = await testDeviceBridge({ simulate: 0, redisPrefix: prefix, env: fleetEnv('node-a') });
    b = await testDeviceBridge({ simulate: 0, redisPrefix: prefix, env: fleetEnv('node-b') });
  }, 60_000);

  afterAll(async () => {
    await a?.cleanup();
    await b?.cleanup();
    await sim?.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it('node-b drives the device after node-a leaves; the lease keeps its token', async () => {
    const endpoint = sim.devices[0]!.address;
    const registered = await timedRequest(a!.app, 'POST', '/v1/devices', { endpoint });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body).toMatchObject({ ownerNode: 'node-a', state: 'online' });
    const id = registered.body['id'] as string;
    const lease = await timedRequest(b.app, 'POST', '/v1/leases', { selector: { deviceId: id } });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);

    await a!.cleanup();
    a = undefined;
    const deadline = Date.now() + 10_000;
    let device: Record<string, unknown> | undefined;
    while (Date.now() < deadline) {
      device = (await timedRequest(b.app, 'GET', '/v1/devices')).body['devices'][0];
      if (device?.['ownerNode'] === 'node-b' && device['state'] === 'online') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(device).toMatchObject({ id, ownerNode: 'node-b', state: 'online', endpoint });
    expect(b.node.adb.tunnels.status(endpoint)?.state).toBe('device');
    const seen = await timedRequest(b.app, 'GET', `/v1/leases/${lease.body['id']}`);
    expect(seen.body).toMatchObject({ state: 'active', fencingToken: lease.body['fencingToken'] });
    const released = await timedRequest(b.app, 'DELETE', `/v1/leases/${lease.body['id']}`);
    expect(released.status).toBe(200);
    expect(released.body['teardown']).toMatchObject({ node: 'node-b', failures: [] });
  }, 30_000);
});
