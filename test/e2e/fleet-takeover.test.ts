/**
 * Takeover (issue #12): one `devicebridge simulate` process with 20 devices, three `devicebridge
 * serve` processes on one Redis with the same devices file (heartbeat 1 s: a node is dead 3 s after
 * its last beat). node-0 starts first and drives all 20; leases are taken on some of them.
 * node-0 is SIGKILLed (its adb server too, as when its host dies). Then:
 * - a lease-scoped call in flight on node-0 (forwarded there by node-1; its device slowed by the
 *   simulator's latency fault) and the next one both fail typed and retryable (503 UNAVAILABLE
 *   naming node-0), and a release through a survivor succeeds, its teardown deferred to the owner;
 * - within TAKEOVER_BOUND_MS every device is owned by a survivor and online again; each device is
 *   connected on its owner's adb server and on no other survivor's (no double owner);
 * - no lease is lost: every lease is still active with the same fencing token, and the next
 *   lease-scoped call succeeds through either survivor; the deferred teardown ran once, on the new
 *   owner.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper, waitForExit } from '../support/cli.ts';
import {
  type FleetNode,
  http,
  killAdbServer,
  metricSum,
  REDIS_URL,
  simulatedDevice,
  startBridge,
  startSimulatorProcess,
  stopFleet,
} from '../support/fleet.ts';
import { waitFor } from '../support/wait-for.ts';

const DEVICES = 20;
const LEASES = 6;
/** Death detection (3 beats of 1 s) + a health pass (500 ms) + tunnel connect, with room for a loaded CI box. */
const TAKEOVER_BOUND_MS = 20_000;
const prefix = `test:${randomUUID()}:`;
const ex = promisify(execFile);

interface Device {
  id: string;
  endpoint: string;
  ownerNode: string;
  state: string;
}

describe('takeover when a node dies (e2e: 3 bridges, 20 simulated devices)', () => {
  const redis = new Redis(REDIS_URL);
  const nodes: FleetNode[] = [];
  let simulator: Awaited<ReturnType<typeof startSimulatorProcess>> | undefined;
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;
  const devices = async (node: FleetNode): Promise<Device[]> =>
    (await http(node.url, 'GET', '/v1/devices')).json.devices;

  beforeAll(async () => {
    const t0 = Date.now();
    tmp = await tempDir();
    const dirs = [0, 1, 2].map((i) => path.join(tmp!.dir, `node-${i}`));
    [simulator] = await Promise.all([
      startSimulatorProcess(DEVICES),
      ...dirs.map((dir) => publishFixtureHelper(dir)),
    ]);
    const file = await simulator.writeDevicesFile(path.join(tmp.dir, 'devices.json'));
    const start = (i: number) =>
      startBridge(dirs[i]!, {
        prefix,
        name: `node-${i}`,
        env: {
          DEVICEBRIDGE_DEVICES_FILE: file,
          DEVICEBRIDGE_HEARTBEAT_MS: '1000',
          DEVICEBRIDGE_HEALTH_INTERVAL_MS: '500',
          DEVICEBRIDGE_FORWARD_TIMEOUT_MS: '20000',
        },
      });
    // node-0 first: it registers (and so drives) all 20; the others know the same tunnels.
    nodes.push(await start(0));
    nodes.push(...(await Promise.all([start(1), start(2)])));
    process.stderr.write(`fleet-takeover: 3 bridges and ${DEVICES} devices up in ${Date.now() - t0} ms\n`);
  }, 180_000);

  afterAll(async () => {
    await stopFleet({ nodes, simulator, redis, prefix, tmp });
  }, 60_000);

  it(`survivors take over every device within ${TAKEOVER_BOUND_MS} ms; leases and fencing tokens survive`, async () => {
    const [victim, one, two] = nodes as [FleetNode, FleetNode, FleetNode];
    const before = await devices(one);
    expect(before).toHaveLength(DEVICES);
    expect(before.every((d) => d.ownerNode === 'node-0' && d.state === 'online')).toBe(true);

    const leases: Array<{ id: string; deviceId: string; fencingToken: number }> = [];
    for (let i = 0; i < LEASES; i++) {
      const got = await http(one.url, 'POST', '/v1/leases', { ttlSeconds: 120 });
      expect(got.status, JSON.stringify(got.json)).toBe(201);
      leases.push(got.json);
    }
    const tap = (node: FleetNode, id: string) =>
      http(node.url, 'POST', `/v1/leases/${id}/gestures`, { kind: 'tap', x: 10, y: 10 });
    expect((await tap(two, leases[0]!.id)).status).toBe(200);

    // A call in flight on node-0 when it dies: its device answers slowly (latency fault).
    const slow = before.find((d) => d.id === leases[1]!.deviceId)!;
    const { index } = await simulatedDevice(simulator!.control, slow.endpoint);
    const fault = await http(simulator!.control, 'PUT', `/devices/${index}/faults`, {
      faults: ['latency-ms=400'],
    });
    expect(fault.status).toBe(200);
    // node-1 forwards the call to the owner; it is in flight once node-0 entered the gesture handler.
    const gestureRuns = () =>
      metricSum(victim.url, 'devicebridge_http_handler_runs_total', { route: '/v1/leases/{id}/gestures' });
    const runsBefore = await gestureRuns();
    const inFlight = tap(one, leases[1]!.id);
    await waitFor(async () => (await gestureRuns()) > runsBefore, {
      what: 'node-0 to enter the gesture handler of the forwarded call',
    });

    victim.child.kill('SIGKILL');
    await waitForExit(victim.child);
    const killedAt = Date.now();
    await killAdbServer(victim.adbPort);
    await http(simulator!.control, 'DELETE', `/devices/${index}/faults`);

    // In-flight work for the dead owner, and the next call, fail typed and retryable, naming it.
    for (const refused of [await inFlight, await tap(two, leases[2]!.id)]) {
      expect(refused.status, JSON.stringify(refused.json)).toBe(503);
      expect(refused.json.error).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
      expect(refused.json.error.message).toContain('node-0');
    }
    // A release through a survivor while the owner is dead: the teardown waits for the next owner.
    const released = leases.pop()!;
    const answer = await http(two.url, 'DELETE', `/v1/leases/${released.id}`);
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    expect(answer.json.teardown.actions.join(' ')).toMatch(/deferred to the owner node node-0/);

    let after: Device[] = [];
    while (Date.now() - killedAt < TAKEOVER_BOUND_MS) {
      after = await devices(one);
      if (after.every((d) => d.ownerNode !== 'node-0' && d.state === 'online')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const tookMs = Date.now() - killedAt;
    expect(
      after.filter((d) => d.ownerNode === 'node-0' || d.state !== 'online'),
      'devices not taken over in time',
    ).toEqual([]);
    expect(after).toHaveLength(DEVICES);
    process.stderr.write(
      `fleet-takeover: ${DEVICES} devices taken over in ${tookMs} ms (node-1: ${after.filter((d) => d.ownerNode === 'node-1').length}, node-2: ${after.filter((d) => d.ownerNode === 'node-2').length})\n`,
    );

    // No double owner: each device is connected on its owner's adb server and on no other survivor's.
    const connected = new Map<string, Set<string>>();
    for (const [name, node] of [
      ['node-1', one],
      ['node-2', two],
    ] as const) {
      const { stdout } = await ex('adb', ['-P', String(node.adbPort), 'devices']);
      const online = stdout
        .split('\n')
        .map((l) => l.split('\t'))
        .filter((f) => f[1] === 'device')
        .map((f) => f[0]!);
      connected.set(name, new Set(online));
    }
    for (const d of after) {
      const on = [...connected].filter(([, set]) => set.has(d.endpoint)).map(([name]) => name);
      expect(on, d.id).toEqual([d.ownerNode]);
    }

    // No lease lost: same fencing tokens, and the next lease-scoped call succeeds through either survivor.
    for (const [i, lease] of leases.entries()) {
      const seen = await http(one.url, 'GET', `/v1/leases/${lease.id}`);
      expect(seen.json).toMatchObject({ id: lease.id, state: 'active', fencingToken: lease.fencingToken });
      const res = await tap(i % 2 === 0 ? one : two, lease.id);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    }

    // The release made while the owner was dead was torn down once, by the device's new owner.
    const newOwner = after.find((d) => d.id === released.deviceId)!.ownerNode;
    const record = await waitFor(
      async () =>
        JSON.parse((await redis.get(`${prefix}{leases}:td:${released.id}`)) ?? 'null') as {
          node: string;
          reason: string;
        } | null,
      { what: 'the teardown record of the release made while the owner was dead' },
    );
    expect(record).toMatchObject({ node: newOwner, reason: 'released' });
    expect(await redis.hlen(`${prefix}{leases}:deferred`)).toBe(0);
  }, 120_000);
});
