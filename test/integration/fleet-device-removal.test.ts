/**
 * Device removal in a fleet (issue #12): `DELETE /v1/devices/{id}` asked of a node that does not
 * drive the device runs on its owner (forwarded once, like a lease-scoped call), so the owner drops
 * the tunnel and stops re-publishing the record: the removal sticks. Two `devicebridge serve`
 * processes on one Redis key prefix; node-a drives a simulated device, node-b drives none.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  afterHealthPasses,
  deleteKeys,
  http,
  REDIS_URL,
  type ServeNode,
  startBridge,
  stopBridge,
} from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;
// Health passes every 200 ms; the default heartbeat (5 s, alive for 15 s) so a loaded machine never
// makes the live owner look dead.
const env = { DEVICEBRIDGE_HEALTH_INTERVAL_MS: '200' };

describe('removing a device through a node that does not drive it', () => {
  const redis = new Redis(REDIS_URL);
  let dir: string;
  let a: ServeNode;
  let b: ServeNode;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'db-fleet-remove-'));
    [a, b] = await Promise.all([
      startBridge(path.join(dir, 'a'), { prefix, name: 'node-a', simulate: 1, env }),
      startBridge(path.join(dir, 'b'), { prefix, name: 'node-b', simulate: 0, env }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a && stopBridge(a), b && stopBridge(b)]);
    await deleteKeys(redis, prefix);
    await redis.quit();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs on the owner and sticks: the device stays gone from every node after several health passes', async () => {
    const listed = await http(b.url, 'GET', '/v1/devices');
    expect(listed.json.devices).toHaveLength(1);
    const device = listed.json.devices[0] as { id: string; ownerNode: string };
    expect(device.ownerNode).toBe('node-a');

    const removed = await fetch(`${b.url}/v1/devices/${encodeURIComponent(device.id)}`, { method: 'DELETE' });
    expect(removed.status, await removed.clone().text()).toBe(204);

    // Three more health passes of each node (two of them wholly after the removal): nothing
    // re-publishes the record.
    await Promise.all([afterHealthPasses(a.url, 3), afterHealthPasses(b.url, 3)]);
    for (const node of [a, b]) {
      const after = await http(node.url, 'GET', '/v1/devices');
      expect(after.json.devices, node.url).toEqual([]);
    }
    expect(removed.headers.get('x-devicebridge-forwarded-by')).toBe('node-a');
  }, 60_000);
});
