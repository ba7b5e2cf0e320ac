/**
 * Teardown runs on the owner (issue #12): two `devicebridge serve` processes on one Redis; node-a
 * drives a device of a `devicebridge simulate` process (whose control API counts the helpers
 * running on it), node-b drives none. A client leases node-a's device through node-b,
 * opens a helper session through node-b (forwarded to node-a: a helper session and an adb forward
 * on node-a) and releases through node-b. Three times over: node-a's adb server is left with no
 * forward, no helper runs on the device, and each teardown ran and was recorded once, on node-a,
 * with its helper session closed.
 * The same for leases that expire, whichever node's expiry pass claims them.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper } from '../support/cli.ts';
import {
  type FleetNode,
  forwardsOf,
  http,
  REDIS_URL,
  simulatedDevice,
  startBridge,
  startSimulatorProcess,
  stopFleet,
} from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;

describe('teardown runs on the owner (e2e, two bridges)', () => {
  const redis = new Redis(REDIS_URL);
  const nodes: FleetNode[] = [];
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;
  let simulator: Awaited<ReturnType<typeof startSimulatorProcess>> | undefined;
  const helpersRunning = async () =>
    (await simulatedDevice(simulator!.control, simulator!.addresses[0]!)).runningHelpers;
  const recorded = async (id: string) =>
    JSON.parse((await redis.get(`${prefix}{leases}:td:${id}`)) ?? 'null');

  beforeAll(async () => {
    tmp = await tempDir();
    await publishFixtureHelper(path.join(tmp.dir, 'a'));
    simulator = await startSimulatorProcess(1);
    const file = await simulator.writeDevicesFile(path.join(tmp.dir, 'devices.json'));
    nodes.push(
      await startBridge(path.join(tmp.dir, 'a'), {
        prefix,
        name: 'node-a',
        env: { DEVICEBRIDGE_DEVICES_FILE: file },
      }),
    );
    nodes.push(await startBridge(path.join(tmp.dir, 'b'), { prefix, name: 'node-b' }));
  }, 120_000);

  afterAll(async () => {
    await stopFleet({ nodes, simulator, redis, prefix, tmp });
  }, 60_000);

  it('three releases through a non-owner leave no forward and no helper session on the owner', async () => {
    const [a, b] = nodes as [FleetNode, FleetNode];
    for (let round = 0; round < 3; round++) {
      const acquired = await http(b.url, 'POST', '/v1/leases', { waitSeconds: 10 });
      expect(acquired.status, JSON.stringify(acquired.json)).toBe(201);
      const lease = acquired.json as { id: string; deviceId: string };
      const snap = await http(b.url, 'POST', `/v1/leases/${lease.id}/snapshot`, {
        transport: 'session',
        format: 'xml',
      });
      expect(snap.status, JSON.stringify(snap.json)).toBe(200);
      expect(snap.json.transport).toBe('session');
      expect(await forwardsOf(a), 'the session holds a forward on the owner').not.toBe('');
      expect(await helpersRunning(), 'the session runs a helper on the device').toBeGreaterThan(0);

      const released = await http(b.url, 'DELETE', `/v1/leases/${lease.id}`);
      expect(released.status, JSON.stringify(released.json)).toBe(200);
      expect(released.json.teardown).toMatchObject({ node: 'node-a', reason: 'released', failures: [] });
      expect(await forwardsOf(a), `round ${round}: forwards left on the owner`).toBe('');
      expect(await helpersRunning(), `round ${round}: helpers left running`).toBe(0);
      const record = await recorded(lease.id);
      expect(record).toMatchObject({ node: 'node-a', reason: 'released', failures: [] });
      expect(record.actions.join('\n')).toMatch(/session/);
    }
    expect(await redis.hlen(`${prefix}{leases}:deferred`)).toBe(0);
  }, 120_000);

  it('expired leases are torn down on the owner whichever node claims the expiry', async () => {
    const [a, b] = nodes as [FleetNode, FleetNode];
    const ids: string[] = [];
    for (let round = 0; round < 3; round++) {
      const acquired = await http(b.url, 'POST', '/v1/leases', { ttlSeconds: 1, waitSeconds: 10 });
      expect(acquired.status, JSON.stringify(acquired.json)).toBe(201);
      const id = (acquired.json as { id: string }).id;
      ids.push(id);
      const snap = await http(b.url, 'POST', `/v1/leases/${id}/snapshot`, {
        transport: 'session',
        format: 'xml',
      });
      expect(snap.status, JSON.stringify(snap.json)).toBe(200);
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && (await recorded(id)) === null) {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    for (const id of ids) {
      const record = await recorded(id);
      expect(record, id).toMatchObject({ node: 'node-a', reason: 'expired', failures: [] });
      expect(record.actions.join('\n')).toMatch(/session/);
    }
    expect(await forwardsOf(a)).toBe('');
    expect(await helpersRunning()).toBe(0);
    expect(await redis.hlen(`${prefix}{leases}:deferred`)).toBe(0);
  }, 120_000);

  it('what a tenant leaves is reset on the owner after a release through a non-owner', async () => {
    const [, b] = nodes as [FleetNode, FleetNode];
    const shell = async (id: string, command: string) => {
      const res = await http(b.url, 'POST', `/v1/leases/${id}/shell`, { command });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return String(res.json.stdout ?? '');
    };
    const first = (await http(b.url, 'POST', '/v1/leases', { waitSeconds: 10 })).json as { id: string };
    await shell(
      first.id,
      'echo left > /data/local/tmp/left-behind; settings put secure some_marker 1; nohup sleep 600 > /dev/null 2>&1 &',
    );
    const released = await http(b.url, 'DELETE', `/v1/leases/${first.id}`);
    expect(released.json.teardown).toMatchObject({ node: 'node-a', failures: [] });
    expect(released.json.teardown.actions).toEqual(
      expect.arrayContaining([
        'reset: removed /data/local/tmp/left-behind (added during the lease)',
        'reset: deleted setting secure some_marker',
        expect.stringMatching(/^reset: killed process \d+ \(sleep 600\)/),
      ]),
    );
    const next = (await http(b.url, 'POST', '/v1/leases', { waitSeconds: 10 })).json as { id: string };
    expect(await shell(next.id, 'ls /data/local/tmp')).not.toContain('left-behind');
    expect((await shell(next.id, 'settings get secure some_marker')).trim()).toBe('null');
    expect(await shell(next.id, 'ps -A -o PID,USER,ARGS')).not.toContain('sleep 600');
    expect((await http(b.url, 'DELETE', `/v1/leases/${next.id}`)).json.teardown.failures).toEqual([]);
  }, 120_000);
});
