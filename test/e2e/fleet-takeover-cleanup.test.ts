/**
 * Cleanup after takeover (issue #12): two `devicebridge serve` processes on one Redis and one
 * `devicebridge simulate` device in its own process, with the survive-hangup fault: processes
 * started from a shell outlive it, as on a real device (an instrumentation runs on after `adb shell`
 * ends; an app_process agent may), so a SIGKILLed bridge leaves its lease's glass agent and helper
 * session instrumentation running on the device.
 *
 * node-a drives the device and holds a lease with a glass agent (clipboard set) and a session
 * snapshot running. node-a is SIGKILLed (its adb server left running, as a bridge crash leaves it);
 * node-b takes the device over. Then: what node-a left on the device is stopped (no agent process,
 * no instrumentation) before node-b's next call; node-b's next session snapshot and clipboard call
 * succeed and each runs exactly once; release on node-b leaves no agent process, no instrumentation
 * and no forward for the device on node-b's adb server.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper, waitForExit } from '../support/cli.ts';
import { GLASS_AGENT_MAIN } from '../support/device-bed.ts';
import {
  type FleetNode,
  forwardsOf,
  http,
  killAdbServer,
  REDIS_URL,
  startBridge,
  startSimulatorProcess,
  stopFleet,
} from '../support/fleet.ts';
import { publishGlassAgent } from '../support/glass.ts';

const prefix = `test:${randomUUID()}:`;
const ex = promisify(execFile);
/** Death detection (3 beats of 1 s) + a health pass + tunnel connect + cleanup, with room for a loaded box. */
const CLEAN_BOUND_MS = 25_000;

describe('cleanup after takeover (e2e: 2 bridges, a device whose processes outlive their shell)', () => {
  const redis = new Redis(REDIS_URL);
  const nodes: FleetNode[] = [];
  let simulator: Awaited<ReturnType<typeof startSimulatorProcess>> | undefined;
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;
  /** The device as the simulator sees it: glass agent processes and helper instrumentations. */
  const onDevice = async () => {
    const { devices } = (await http(simulator!.control, 'GET', '/devices')).json as {
      devices: Array<{ runningHelpers: number; processes: string[] }>;
    };
    const d = devices[0]!;
    return {
      agents: d.processes.filter((p) => p.includes(GLASS_AGENT_MAIN)).length,
      helpers: d.runningHelpers,
    };
  };

  beforeAll(async () => {
    tmp = await tempDir();
    const dirs = ['a', 'b'].map((n) => path.join(tmp!.dir, n));
    [simulator] = await Promise.all([
      startSimulatorProcess(1, ['--fault', 'survive-hangup']),
      ...dirs.map(async (dir) => {
        await publishFixtureHelper(dir);
        await publishGlassAgent(new FsArtifactStore(path.join(dir, 'artifacts')), dir);
      }),
    ]);
    const file = await simulator.writeDevicesFile(path.join(tmp.dir, 'devices.json'));
    const env = {
      DEVICEBRIDGE_DEVICES_FILE: file,
      DEVICEBRIDGE_HEARTBEAT_MS: '1000',
      DEVICEBRIDGE_HEALTH_INTERVAL_MS: '500',
    };
    // node-a first: it registers (and so drives) the device; node-b knows the same tunnel.
    nodes.push(await startBridge(dirs[0]!, { prefix, name: 'node-a', env }));
    nodes.push(await startBridge(dirs[1]!, { prefix, name: 'node-b', env }));
  }, 120_000);

  afterAll(async () => {
    await stopFleet({ nodes, simulator, redis, prefix, tmp });
  }, 60_000);

  it('stops what the dead node left on the device; the next calls start one of each; release leaves none', async () => {
    const [a, b] = nodes as [FleetNode, FleetNode];
    const got = await http(b.url, 'POST', '/v1/leases', { ttlSeconds: 120 });
    expect(got.status, JSON.stringify(got.json)).toBe(201);
    const lease = got.json as { id: string; deviceId: string; fencingToken: number };
    const snapshot = (node: FleetNode) =>
      http(node.url, 'POST', `/v1/leases/${lease.id}/snapshot`, { transport: 'session', format: 'xml' });

    // On node-a (the owner; node-b forwards): a glass agent and a helper session.
    const set = await http(b.url, 'PUT', `/v1/leases/${lease.id}/clipboard`, { text: 'from node-a' });
    expect(set.status, JSON.stringify(set.json)).toBe(200);
    const first = await snapshot(b);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.transport).toBe('session');
    expect(await onDevice()).toEqual({ agents: 1, helpers: 1 });
    expect(await forwardsOf(a), 'node-a holds the forwards').not.toBe('');

    a.child.kill('SIGKILL');
    await waitForExit(a.child);
    const killedAt = Date.now();
    // The device outlives node-a's hang-up: its processes still run. A later command through
    // node-a's adb server over the same transport comes after the hang-up of node-a's streams.
    const { stdout: after } = await ex('adb', [
      '-P',
      String(a.adbPort),
      '-s',
      simulator!.addresses[0]!,
      'shell',
      'echo after',
    ]);
    expect(after).toBe('after\n');
    expect(await onDevice()).toEqual({ agents: 1, helpers: 1 });

    // node-b takes the device over and stops what node-a left, before any call of the lease.
    let seen = await onDevice();
    let owner = '';
    while (Date.now() - killedAt < CLEAN_BOUND_MS) {
      const { devices } = (await http(b.url, 'GET', '/v1/devices')).json as {
        devices: Array<{ id: string; ownerNode: string; state: string }>;
      };
      const d = devices.find((x) => x.id === lease.deviceId)!;
      owner = `${d.ownerNode}/${d.state}`;
      seen = await onDevice();
      if (owner === 'node-b/online' && seen.agents === 0 && seen.helpers === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(owner).toBe('node-b/online');
    expect(seen, "node-a's agent and helper session are stopped").toEqual({ agents: 0, helpers: 0 });
    process.stderr.write(`fleet-takeover-cleanup: taken over and cleaned in ${Date.now() - killedAt} ms\n`);

    // The lease moved with the device: same fencing token; the next calls start what they need once.
    const again = await http(b.url, 'GET', `/v1/leases/${lease.id}`);
    expect(again.json).toMatchObject({ state: 'active', fencingToken: lease.fencingToken });
    const next = await snapshot(b);
    expect(next.status, JSON.stringify(next.json)).toBe(200);
    expect(next.json.transport).toBe('session');
    const clip = await http(b.url, 'GET', `/v1/leases/${lease.id}/clipboard`);
    expect(clip.status, JSON.stringify(clip.json)).toBe(200);
    expect(clip.json.text).toBe('from node-a');
    expect(await onDevice(), "exactly one agent and one session after node-b's calls").toEqual({
      agents: 1,
      helpers: 1,
    });

    const released = await http(b.url, 'DELETE', `/v1/leases/${lease.id}`);
    expect(released.status, JSON.stringify(released.json)).toBe(200);
    expect(await onDevice(), 'release leaves nothing running').toEqual({ agents: 0, helpers: 0 });
    const { stdout } = await ex('adb', ['-P', String(b.adbPort), 'forward', '--list']);
    expect(stdout.split('\n').filter((l) => l.includes(simulator!.addresses[0]!))).toEqual([]);

    // Not cleaned by node-b (documented): the forwards node-a created live in node-a's own adb
    // server, which a survivor cannot prove is a bridge's; node-a removes them when it restarts
    // (it adopts its server by the pid file in its data dir and reconciles its forward ledger).
    await killAdbServer(a.adbPort);
  }, 90_000);
});
