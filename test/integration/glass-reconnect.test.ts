/**
 * The glass agent within one lease survives its device's adb transport being re-established and
 * the bridge's adb server being SIGKILLed (its runtime starts a new one): either takes the agent's
 * forward with it (adb drops a device's forwards when its transport ends; a new server has none),
 * and usually the agent process too (a hang-up). For every fault kind that re-establishes the
 * transport, and for the server kill, the next clipboard set, text and key calls on the same lease
 * succeed within the agent's request deadline, through one fresh forward to the agent (none stale
 * in the ledger or on the adb server) and one agent process; release then leaves neither behind.
 * Driven through the HTTP app with the simulator's runtime faults.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import type { SimulatedDevice } from '../../src/simulator/index.ts';
import {
  type DeviceBridge,
  type TimedAnswer,
  tempDir,
  testDeviceBridge,
  timedRequest,
} from '../support/bridge.ts';
import { GLASS_AGENT_MAIN } from '../support/device-bed.ts';
import { AGENT_DEADLINE_MS, glassAgentCalls, publishGlassAgent } from '../support/glass.ts';

/** A device as GET /v1/devices lists it (the fields read here). */
type ListedDevice = { id: string; serial: string; state: string; quarantineReason?: string };

const AGENT_REMOTE = 'localabstract:glass-agent';

let bridge: DeviceBridge;
let tmp: { dir: string; cleanup(): Promise<void> };
let deviceId: string;
const rows: string[] = [];
const taken = new Set<string>();

const sim = (): SimulatedDevice => bridge.node.simulator!.devices[0]!;
const serial = () => sim().serial;
const android = () => sim().android as SimAndroidHandle;
const agents = () =>
  android()
    .device.processes()
    .filter((p) => p.cmdline.includes(GLASS_AGENT_MAIN));

function api(method: string, path: string, body?: unknown): Promise<TimedAnswer> {
  return timedRequest(bridge.app, method, path, body);
}

/**
 * Poll `condition` every 100 ms until it holds; fails naming `what` (and the last error) after
 * `timeoutMs`. The device and the adb server coming back are waited for generously: a loaded
 * machine is slow at it, and it is not what these tests measure.
 */
async function until(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 60_000) {
  const started = performance.now();
  let last = '';
  for (;;) {
    const held = await Promise.resolve()
      .then(condition)
      .catch((err: Error) => {
        last = err.message;
        return false;
      });
    if (held) return;
    if (performance.now() - started > timeoutMs) {
      throw new Error(`${what}: not within ${timeoutMs} ms${last === '' ? '' : ` (last error: ${last})`}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The adb server's forwards of the device, as `local remote`. */
async function serverForwards(): Promise<Array<{ local: string; remote: string }>> {
  return (await bridge.node.adb.client.listForwards({ timeoutMs: 5000 }))
    .filter((f) => f.serial === serial())
    .map(({ local, remote }) => ({ local, remote }));
}

async function agentForwardOnServer(): Promise<boolean> {
  return (await serverForwards()).some((f) => f.remote === AGENT_REMOTE);
}

/** adb shows the device online and the bridge lists it online (else throws what it saw). */
async function deviceBack(): Promise<boolean> {
  const listed = await bridge.node.adb.client.devices({ timeoutMs: 2000 });
  const adbState = listed.find((d) => d.serial === serial())?.state ?? 'absent';
  const devices = (await api('GET', '/v1/devices')).body.devices as ListedDevice[];
  const record = devices.find((d) => d.id === deviceId);
  if (adbState === 'device' && record?.state === 'online') return true;
  const why = record?.quarantineReason === undefined ? '' : ` (${record.quarantineReason})`;
  throw new Error(`adb reads ${adbState}, the bridge ${record?.state}${why}`);
}

async function acquire(): Promise<string> {
  const res = await api('POST', '/v1/leases', { selector: { deviceId }, waitSeconds: 30 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  taken.add(res.body.id);
  return res.body.id as string;
}

beforeAll(async () => {
  // Health checks every second, as in the chaos suite: five failed checks quarantine a device, and a
  // loaded machine may take longer than 2.5 s to reconnect it after the adb server is killed.
  bridge = await testDeviceBridge({
    simulate: 1,
    env: { DEVICEBRIDGE_NODE: 'glass-reconnect', DEVICEBRIDGE_HEALTH_INTERVAL_MS: '1000' },
  });
  tmp = await tempDir();
  await publishGlassAgent(bridge.services.store, tmp.dir, { version: '1.0.0' });
  const listed = (await api('GET', '/v1/devices')).body.devices as ListedDevice[];
  deviceId = listed.find((d) => d.serial === serial())!.id;
}, 120_000);

afterEach(async () => {
  sim().clearFault();
  sim().plug();
  for (const id of taken) await api('DELETE', `/v1/leases/${id}`);
  taken.clear();
});

afterAll(async () => {
  process.stdout.write(
    `\nglass agent after a reconnect (deadline ${AGENT_DEADLINE_MS} ms)\n| fault | clipboard (ms) | text (ms) | key (ms) |\n|---|---|---|---|\n${rows.join('\n')}\n`,
  );
  await bridge?.cleanup();
  await tmp?.cleanup();
});

interface ReconnectCase {
  fault: string;
  /** Processes started from a shell outlive it (a real device's agent may survive the hang-up). */
  surviveHangup?: boolean;
  /** Break the transport; resolves once it is broken (the agent's forward gone from the server). */
  inject(): Promise<void>;
  /** Let the device back. */
  lift(): void;
}

/** Set `faults`, then wait for the agent's forward to go with the transport (traffic wakes a drop). */
const faulted = (faults: Parameters<SimulatedDevice['setFault']>[0]) => async (): Promise<void> => {
  sim().setFault(faults);
  await until('the transport ended', async () => {
    await bridge.node.adb.client.shell(serial(), 'true', { timeoutMs: 500 }).catch(() => undefined);
    return !(await agentForwardOnServer());
  });
};

/** SIGKILL the bridge's adb server; resolves once its runtime runs a new one. */
async function killAdbServer(): Promise<void> {
  const pid = bridge.node.adb.server.pid;
  expect(pid).toBeTypeOf('number');
  process.kill(pid!, 'SIGKILL');
  await until('a new adb server', () => {
    const now = bridge.node.adb.server.pid;
    if (now !== undefined && now !== pid) return true;
    throw new Error(`pid ${now}, restarts ${bridge.node.adb.server.restarts}`);
  });
}

const cases: ReconnectCase[] = [
  {
    fault: 'disconnect',
    inject: async () => {
      sim().disconnectAll();
      await until('the transport ended', async () => !(await agentForwardOnServer()));
    },
    lift: () => undefined,
  },
  {
    fault: 'disconnect, the agent outliving its shell',
    surviveHangup: true,
    inject: async () => {
      sim().disconnectAll();
      await until('the transport ended', async () => !(await agentForwardOnServer()));
    },
    lift: () => undefined,
  },
  {
    fault: 'drop after bytes',
    inject: faulted({ dropAfterBytes: 0 }),
    lift: () => sim().clearFault('dropAfterBytes'),
  },
  {
    fault: 'offline, then back',
    inject: faulted({ offlineAfterMs: 0 }),
    lift: () => sim().clearFault('offlineAfterMs'),
  },
  {
    fault: 'unauthorized, then back',
    inject: faulted({ unauthorized: true }),
    lift: () => sim().clearFault('unauthorized'),
  },
  {
    fault: 'cable pull',
    inject: async () => {
      sim().unplug();
      await until('the transport ended', async () => !(await agentForwardOnServer()));
    },
    lift: () => sim().plug(),
  },
  { fault: 'adb server SIGKILL', inject: killAdbServer, lift: () => undefined },
  {
    fault: 'adb server SIGKILL, the agent outliving its shell',
    surviveHangup: true,
    inject: killAdbServer,
    lift: () => undefined,
  },
];

/** The three agent calls on the lease: each 200 within the deadline; the device saw them. */
const agentCalls = (leaseId: string, what: string): Promise<number[]> =>
  glassAgentCalls(api, leaseId, () => android().device.clipboard, what);

describe('glass agent: recovery within a lease after the transport is re-established', () => {
  for (const c of cases) {
    it(c.fault, async () => {
      if (c.surviveHangup) sim().setFault({ surviveHangup: true });
      const leaseId = await acquire();
      await agentCalls(leaseId, `${c.fault} (before)`);
      expect(agents()).toHaveLength(1);
      expect(await agentForwardOnServer()).toBe(true);

      await c.inject();
      c.lift();
      await until('the device is back', deviceBack);

      const ms = await agentCalls(leaseId, c.fault);
      rows.push(`| ${c.fault} | ${ms.map((x) => x.toFixed(0)).join(' | ')} |`);
      // One agent, reached through one forward: the ledger holds what the server has, nothing stale.
      expect(agents(), c.fault).toHaveLength(1);
      const onServer = (await serverForwards()).filter((f) => f.remote === AGENT_REMOTE);
      expect(onServer, c.fault).toHaveLength(1);
      const ledger = bridge.node.adb.ledger.entries(leaseId).map(({ local, remote }) => ({ local, remote }));
      expect(ledger, c.fault).toEqual(onServer);

      const released = await api('DELETE', `/v1/leases/${leaseId}`);
      taken.delete(leaseId);
      expect(released.status, JSON.stringify(released.body)).toBe(200);
      expect(released.body.teardown.failures, c.fault).toEqual([]);
      expect(bridge.node.adb.ledger.entries(leaseId)).toEqual([]);
      expect(await serverForwards(), c.fault).toEqual([]);
      await until('no agent left after release', () => agents().length === 0, 10_000);
    }, 120_000);
  }
});
