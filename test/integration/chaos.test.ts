/**
 * The chaos suite (issue 15): every fault kind a device farm meets, switched on and off at run time
 * on simulated devices behind the bridge's real adb server, driven through the HTTP app. For each:
 *
 * - the caller gets a typed error (a known code with its `retryable` flag) within the request's
 *   deadline, or success;
 * - after the fault is lifted the device serves a snapshot again, without operator action, within
 *   the case's stated bound (the recovery time is measured and printed);
 * - the lease's release tears down without failures (no quarantine), leaving no forward of the
 *   device on the adb server and no helper or glass agent running on the device.
 *
 * The faults that re-establish the device's transport (drop, offline, cable pull, unauthorized) and
 * the adb server SIGKILL also hit a running glass agent (adb drops its forward with the transport):
 * after recovery its clipboard, text and key calls succeed on the same lease within the agent's
 * deadline (column `glass (ms)`).
 *
 * At the end: 0 forwards on the adb server, 0 helpers on any device, every device online and none
 * quarantined, and every lease the suite took ended `released` (none lost). One bridge and its
 * devices serve every case (each case leases one device by id); a summary table is printed.
 * Bridge SIGKILL mid-lease (with Redis) is in chaos-bridge-kill.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.ts';
import type { SimulatedDevice } from '../../src/simulator/index.ts';
import {
  type DeviceBridge,
  type TimedAnswer,
  tempDir,
  testDeviceBridge,
  timedRequest,
} from '../support/bridge.ts';
import { GLASS_AGENT_MAIN } from '../support/device-bed.ts';
import { glassAgentCalls, publishGlassAgent } from '../support/glass.ts';
import { waitFor } from '../support/wait-for.ts';

type Json = Record<string, any>;
type Answer = TimedAnswer;

/** What each faulted request may take: the helper's timeout, and the request's whole deadline. */
const TIMEOUT_MS = 2000;
const DEADLINE_MS = 4000;
/** Slack for the HTTP layer and the event loop of a loaded 2-core machine. */
const MARGIN_MS = 1500;
/** How long a release waits for its teardown before it answers with the teardown pending. */
const RELEASE_WAIT_MS = 5000;

interface Row {
  fault: string;
  code: string;
  retryable: string;
  recoveryS: string;
  boundS: number;
  /** The glass agent's clipboard / text / key calls after recovery (ms), when the case ran it. */
  glassMs?: string;
}
const rows: Row[] = [];
const leasesTaken: string[] = [];

let bridge: DeviceBridge;
let tmp: { dir: string; cleanup(): Promise<void> };
let devices: Array<{ id: string; sim: SimulatedDevice }>;

function api(method: string, path: string, body?: unknown): Promise<Answer> {
  return timedRequest(bridge.app, method, path, body);
}

const snapshot = (leaseId: string, extra: Json = {}) =>
  api('POST', `/v1/leases/${leaseId}/snapshot`, {
    format: 'xml',
    timeoutMs: TIMEOUT_MS,
    deadlineMs: DEADLINE_MS,
    ...extra,
  });

async function acquire(deviceId: string): Promise<string> {
  const res = await api('POST', '/v1/leases', { selector: { deviceId }, ttlSeconds: 300, waitSeconds: 30 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  leasesTaken.push(res.body.id);
  return res.body.id as string;
}

/** A body for failure messages (no snapshot XML). */
function brief(body: Json): string {
  const { xml: _xml, snapshot: _snapshot, ...rest } = body ?? {};
  return JSON.stringify(rest).slice(0, 600);
}

/** The answer is a success or a typed error with the code's documented `retryable`. */
function expectTyped(res: Answer, what: string): void {
  if (res.status === 200) return;
  const error = res.body?.error;
  expect(error, `${what}: ${brief(res.body)}`).toBeDefined();
  expect(Object.keys(ERROR_CODES), what).toContain(error.code);
  expect(typeof error.retryable, what).toBe('boolean');
  expect(res.status, what).toBe(ERROR_CODES[error.code as keyof typeof ERROR_CODES].status);
}

/** Snapshots until one answers 200; seconds it took (fails past `boundS`). */
async function recovery(leaseId: string, boundS: number): Promise<number> {
  const started = performance.now();
  let last: Answer | undefined;
  while (performance.now() - started < boundS * 1000) {
    last = await snapshot(leaseId, { deadlineMs: 3000 });
    if (last.status === 200) return (performance.now() - started) / 1000;
    expectTyped(last, 'during recovery');
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not usable within ${boundS} s after the fault was lifted: ${brief(last?.body ?? {})}`);
}

async function forwardsOf(serial: string): Promise<string[]> {
  return (await bridge.node.adb.client.listForwards({ timeoutMs: 5000 }))
    .filter((f) => f.serial === serial)
    .map((f) => `${f.local} ${f.remote}`);
}

const glassAgents = (d: SimulatedDevice) => d.processes().filter((p) => p.cmdline.includes(GLASS_AGENT_MAIN));

/** The glass agent's calls on the lease after `what` (see glassAgentCalls). */
const glassCalls = (leaseId: string, d: SimulatedDevice, what: string): Promise<number[]> =>
  glassAgentCalls(api, leaseId, () => d.android.device.clipboard, what);

/** Release; teardown clean; nothing of the lease left on the adb server or the device. */
async function releaseClean(leaseId: string, d: { id: string; sim: SimulatedDevice }, what: string) {
  const released = await api('DELETE', `/v1/leases/${leaseId}`);
  expect(released.status, `${what}: ${brief(released.body)}`).toBe(200);
  expect(released.body.teardown.failures, what).toEqual([]);
  expect(await forwardsOf(d.sim.serial), `${what}: forwards left`).toEqual([]);
  expect(d.sim.runningHelpers(), `${what}: helpers left running`).toBe(0);
  // The agent's shell ends with the teardown; the simulated process goes a moment later.
  const started = performance.now();
  while (glassAgents(d.sim).length > 0 && performance.now() - started < 10_000) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(glassAgents(d.sim), `${what}: glass agent left running`).toEqual([]);
  const record = (await api('GET', '/v1/devices')).body.devices.find((x: Json) => x.id === d.id);
  expect(record.state, `${what}: device state`).not.toBe('quarantined');
}

interface FaultCase {
  fault: string;
  device: number;
  inject(d: SimulatedDevice): void | Promise<void>;
  lift(d: SimulatedDevice): void | Promise<void>;
  /** The faulted request (default: a snapshot through `auto`). */
  request?: (leaseId: string) => Promise<Answer>;
  /** `ok`: must succeed; a code list: must fail with one of them; `any`: a typed answer. */
  expect: 'ok' | 'any' | string[];
  /** Seconds within which the device must serve again after the fault is lifted. */
  recoveryBoundS: number;
  /** The fault re-establishes the transport: a glass agent runs through it and must serve after. */
  glass?: boolean;
}

async function runCase(c: FaultCase): Promise<void> {
  const d = devices[c.device]!;
  const leaseId = await acquire(d.id);
  // A warm device: helper installed, a session running, so the fault hits live state.
  const warm = await snapshot(leaseId);
  expect(warm.status, `${c.fault}: warm-up ${brief(warm.body)}`).toBe(200);

  let res: Answer;
  let recoveryS: number;
  let glassMs: number[] | undefined;
  try {
    if (c.glass) await glassCalls(leaseId, d.sim, `${c.fault} (before)`);
    await c.inject(d.sim);
    res = await (c.request ?? ((id) => snapshot(id)))(leaseId);
    expectTyped(res, c.fault);
    expect(res.ms, `${c.fault}: answered after the deadline`).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    if (c.expect === 'ok') expect(res.status, `${c.fault}: ${brief(res.body)}`).toBe(200);
    else if (Array.isArray(c.expect))
      expect(c.expect, `${c.fault}: ${brief(res.body)}`).toContain(res.body.error?.code);
    await c.lift(d.sim);
    recoveryS = await recovery(leaseId, c.recoveryBoundS);
    if (c.glass) glassMs = await glassCalls(leaseId, d.sim, c.fault);
  } catch (err) {
    // Leave the device to the next case: lift the fault and end the lease, then report.
    await c.lift(d.sim);
    await api('DELETE', `/v1/leases/${leaseId}`);
    throw err;
  }
  await releaseClean(leaseId, d, c.fault);
  rows.push({
    fault: c.fault,
    code: res.status === 200 ? 'ok (200)' : res.body.error.code,
    retryable: res.status === 200 ? '-' : String(res.body.error.retryable),
    recoveryS: recoveryS.toFixed(2),
    boundS: c.recoveryBoundS,
    ...(glassMs ? { glassMs: glassMs.map((x) => x.toFixed(0)).join(' / ') } : {}),
  });
}

beforeAll(async () => {
  bridge = await testDeviceBridge({
    simulate: 3,
    env: { DEVICEBRIDGE_HEALTH_INTERVAL_MS: '1000', DEVICEBRIDGE_RELEASE_WAIT_MS: String(RELEASE_WAIT_MS) },
  });
  tmp = await tempDir();
  await publishGlassAgent(bridge.services.store, tmp.dir, { version: '1.0.0' });
  const listed = (await api('GET', '/v1/devices')).body.devices as Json[];
  const sims = bridge.node.simulator!.devices;
  devices = sims.map((sim) => ({ id: listed.find((x) => x.serial === sim.serial)!.id as string, sim }));
}, 120_000);

afterAll(async () => {
  const table = [
    '| fault | code | retryable | recovery (s) | bound (s) | glass after: clipboard / text / key (ms) |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.fault} | ${r.code} | ${r.retryable} | ${r.recoveryS} | ${r.boundS} | ${r.glassMs ?? '-'} |`,
    ),
  ].join('\n');
  process.stdout.write(
    `\nchaos summary (request deadline ${DEADLINE_MS} ms, helper timeout ${TIMEOUT_MS} ms)\n${table}\n`,
  );
  await bridge?.cleanup();
  await tmp?.cleanup();
});

const set = (faults: Parameters<SimulatedDevice['setFault']>[0]) => (d: SimulatedDevice) =>
  d.setFault(faults);
const clear = (d: SimulatedDevice) => d.clearFault();

describe('chaos: link faults', () => {
  const cases: FaultCase[] = [
    {
      fault: 'latency 150 ms',
      device: 0,
      inject: set({ latencyMs: 150 }),
      lift: clear,
      expect: 'ok',
      recoveryBoundS: 5,
    },
    {
      fault: 'bandwidth 256 KiB/s',
      device: 1,
      inject: set({ bandwidthBytesPerSec: 256 * 1024 }),
      lift: clear,
      expect: 'ok',
      recoveryBoundS: 5,
    },
    {
      fault: 'drop after 4 KiB',
      device: 2,
      // Counted from the start of the connection: the link drops at its next bytes.
      inject: (d) => d.setFault({ dropAfterBytes: 4096 }),
      lift: clear,
      expect: 'any',
      recoveryBoundS: 20,
      glass: true,
    },
    {
      fault: 'stall',
      device: 0,
      inject: set({ stall: true }),
      lift: clear,
      expect: 'any',
      recoveryBoundS: 20,
    },
    {
      fault: 'offline',
      device: 1,
      inject: set({ offlineAfterMs: 0 }),
      lift: clear,
      expect: 'any',
      recoveryBoundS: 20,
      glass: true,
    },
    {
      fault: 'cable pull',
      device: 2,
      inject: (d) => d.unplug(),
      lift: (d) => d.plug(),
      expect: 'any',
      recoveryBoundS: 20,
      glass: true,
    },
    {
      fault: 'unauthorized',
      device: 0,
      inject: set({ unauthorized: true }),
      lift: clear,
      expect: 'any',
      recoveryBoundS: 20,
      glass: true,
    },
  ];
  for (const c of cases) it(c.fault, () => runCase(c), 60_000);
});

describe('chaos: helper faults', () => {
  const oneShot = (id: string) => snapshot(id, { transport: 'one-shot' });
  const cases: FaultCase[] = [
    {
      fault: 'helper crash',
      device: 1,
      inject: set({ helperCrash: true }),
      lift: clear,
      expect: ['HELPER_FAILED'],
      recoveryBoundS: 5,
    },
    {
      fault: 'helper timeout',
      device: 2,
      inject: set({ helperTimeout: true }),
      lift: clear,
      expect: ['TIMEOUT'],
      recoveryBoundS: 5,
    },
    {
      fault: 'chunk corrupt (one-shot)',
      device: 0,
      inject: set({ chunk: { action: 'corrupt', index: 0 } }),
      lift: clear,
      request: oneShot,
      expect: ['HELPER_PROTOCOL_ERROR'],
      recoveryBoundS: 5,
    },
    {
      fault: 'chunk duplicate (one-shot)',
      device: 1,
      inject: set({ chunk: { action: 'duplicate', index: 0 } }),
      lift: clear,
      request: oneShot,
      expect: 'any',
      recoveryBoundS: 5,
    },
    {
      fault: 'chunk missing (one-shot)',
      device: 2,
      inject: set({ chunk: { action: 'drop', index: 0 } }),
      lift: clear,
      request: oneShot,
      expect: ['HELPER_PROTOCOL_ERROR'],
      recoveryBoundS: 5,
    },
    {
      fault: 'install failure',
      device: 0,
      inject: set({ installFailure: 'INSTALL_FAILED_INSUFFICIENT_STORAGE' }),
      lift: clear,
      request: (id) =>
        api('POST', `/v1/leases/${id}/helpers/android-snapshot-helper/ensure`, { policy: 'always' }),
      expect: ['HELPER_INSTALL_FAILED'],
      recoveryBoundS: 10,
    },
  ];
  for (const c of cases) it(c.fault, () => runCase(c), 60_000);
});

describe('chaos: adb server and release races', () => {
  it('adb server SIGKILL under traffic', async () => {
    const d = devices[1]!;
    const leaseId = await acquire(d.id);
    expect((await snapshot(leaseId)).status).toBe(200);
    await glassCalls(leaseId, d.sim, 'adb server SIGKILL (before)');
    const pid = bridge.node.adb.server.pid;
    expect(pid).toBeTypeOf('number');
    const snapshotRuns = async () =>
      (await bridge.services.metrics.handlerRuns.get()).values
        .filter((v) => v.labels.route === '/v1/leases/{id}/snapshot')
        .reduce((sum, v) => sum + v.value, 0);
    const entered = await snapshotRuns();
    const traffic = Array.from({ length: 3 }, () => snapshot(leaseId, { transport: 'one-shot' }));
    await waitFor(async () => (await snapshotRuns()) >= entered + 3, {
      what: 'the three snapshots to be in their handler',
    });
    process.kill(pid!, 'SIGKILL');
    const answers = await Promise.all(traffic);
    for (const a of answers) {
      expectTyped(a, 'adb server SIGKILL');
      expect(a.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    }
    const failed = answers.find((a) => a.status !== 200);
    const recoveryS = await recovery(leaseId, 30);
    expect(bridge.node.adb.server.pid).not.toBe(pid);
    const glassMs = await glassCalls(leaseId, d.sim, 'adb server SIGKILL');
    await releaseClean(leaseId, d, 'adb server SIGKILL');
    rows.push({
      fault: 'adb server SIGKILL under traffic',
      code: failed ? failed.body.error.code : 'ok (200)',
      retryable: failed ? String(failed.body.error.retryable) : '-',
      recoveryS: recoveryS.toFixed(2),
      boundS: 30,
      glassMs: glassMs.map((x) => x.toFixed(0)).join(' / '),
    });
  }, 90_000);

  it('release racing every operation', async () => {
    const ops: Array<[string, (id: string) => Promise<Answer>]> = [
      ['ensure', (id) => api('POST', `/v1/leases/${id}/helpers/android-snapshot-helper/ensure`, {})],
      ['snapshot session', (id) => snapshot(id, { transport: 'session' })],
      ['snapshot one-shot', (id) => snapshot(id, { transport: 'one-shot' })],
      ['snapshot auto', (id) => snapshot(id)],
      ['viewport', (id) => api('GET', `/v1/leases/${id}/viewport?transport=session`)],
      ['gesture', (id) => api('POST', `/v1/leases/${id}/gestures`, { kind: 'tap', x: 10, y: 10 })],
      ['renew', (id) => api('POST', `/v1/leases/${id}/renew`, { ttlSeconds: 60 })],
    ];
    const codes = new Set<string>();
    for (const [name, op] of ops) {
      for (const delayMs of [0, 5, 30]) {
        const d = devices[2]!;
        const leaseId = await acquire(d.id);
        const running = op(leaseId);
        await new Promise((r) => setTimeout(r, delayMs));
        const released = api('DELETE', `/v1/leases/${leaseId}`);
        const [res, rel] = await Promise.all([running, released]);
        const what = `release racing ${name} (+${delayMs} ms)`;
        expectTyped(res, what);
        if (res.status !== 200) {
          expect(res.body.error.code, what).toBe('LEASE_EXPIRED');
          codes.add('LEASE_EXPIRED');
        }
        expect(rel.status, what).toBe(200);
        expect(rel.body.teardown.failures, what).toEqual([]);
        expect(await forwardsOf(d.sim.serial), `${what}: forwards left`).toEqual([]);
        expect(d.sim.runningHelpers(), `${what}: helpers left running`).toBe(0);
      }
    }
    rows.push({
      fault: 'release racing every operation',
      code: [...codes].join(', ') || 'ok (200)',
      retryable: codes.size > 0 ? 'false' : '-',
      recoveryS: '0.00',
      boundS: 0,
    });
  }, 120_000);
});

describe('chaos: release while the device is offline', () => {
  it('release during a 3 s offline fault: the teardown runs again once the device is back, no quarantine', async () => {
    const d = devices[1]!;
    const leaseId = await acquire(d.id);
    expect((await snapshot(leaseId, { transport: 'session' })).status).toBe(200);
    const started = performance.now();
    d.sim.setFault({ offlineAfterMs: 0 });
    const back = setTimeout(() => d.sim.clearFault(), 3000);
    let released: Answer;
    try {
      released = await api('DELETE', `/v1/leases/${leaseId}`);
    } finally {
      // The fault lasts its 3 s whatever the release did.
      while (d.sim.faults.offlineAfterMs !== undefined) await new Promise((r) => setTimeout(r, 100));
      clearTimeout(back);
    }
    expect(released.status, brief(released.body)).toBe(200);
    expect(released.body.teardown.failures).toEqual([]);
    let record: Json | null = null;
    const deadline = performance.now() + 60_000;
    while (record === null && performance.now() < deadline) {
      record = await bridge.node.leases.teardownOf(leaseId);
      if (record === null) await new Promise((r) => setTimeout(r, 100));
    }
    expect(record, 'teardown recorded within 60 s').not.toBeNull();
    expect(record!.failures).toEqual([]);
    expect(record!.actions).not.toContain('quarantined device');
    expect(await forwardsOf(d.sim.serial), 'forwards left').toEqual([]);
    expect(d.sim.runningHelpers(), 'helpers left running').toBe(0);
    const device = (await api('GET', '/v1/devices')).body.devices.find((x: Json) => x.id === d.id);
    expect(device.state).not.toBe('quarantined');
    rows.push({
      fault: 'release during a 3 s offline fault',
      code: 'ok (200)',
      retryable: '-',
      recoveryS: ((performance.now() - started) / 1000).toFixed(2),
      boundS: 60,
    });
  }, 90_000);
});

/** Poll the lease's teardown record until it is written (fails after `ms`). */
async function teardownRecord(leaseId: string, ms: number): Promise<Json> {
  const deadline = performance.now() + ms;
  for (;;) {
    const record = await bridge.node.leases.teardownOf(leaseId);
    if (record !== null) return record as Json;
    if (performance.now() > deadline) throw new Error(`teardown of ${leaseId} not recorded within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('chaos: one-shot calls at once under a fault', () => {
  it('latency 150 ms: 10 pairs of one-shot calls at once on one lease, none fails', async () => {
    const d = devices[2]!;
    const leaseId = await acquire(d.id);
    const oneShot = () => snapshot(leaseId, { transport: 'one-shot' });
    const tap = () =>
      api('POST', `/v1/leases/${leaseId}/gestures`, {
        kind: 'tap',
        x: 10,
        y: 10,
        transport: 'one-shot',
        deadlineMs: DEADLINE_MS,
      });
    expect((await oneShot()).status).toBe(200); // the helper installed before the fault
    d.sim.setFault({ latencyMs: 150 });
    const failed: string[] = [];
    let slowest = 0;
    try {
      for (let pair = 0; pair < 10; pair++) {
        const answers = await Promise.all([oneShot(), pair % 2 === 0 ? oneShot() : tap()]);
        for (const a of answers) {
          expectTyped(a, 'one-shot pair under latency');
          slowest = Math.max(slowest, a.ms);
          if (a.status !== 200) failed.push(`${a.body.error.code}: ${a.body.error.message}`);
        }
      }
    } finally {
      d.sim.clearFault();
    }
    expect(failed, failed.join('\n')).toEqual([]);
    expect(slowest).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    await releaseClean(leaseId, d, 'one-shot pairs under latency');
    rows.push({
      fault: 'one-shot pairs under latency 150 ms',
      code: 'ok (200)',
      retryable: '-',
      recoveryS: '0.00',
      boundS: 0,
    });
  }, 90_000);
});

describe('chaos: release while the device stalls', () => {
  it('release during a stall answers within the release wait, the teardown is recorded once the stall is lifted', async () => {
    const d = devices[0]!;
    const leaseId = await acquire(d.id);
    expect((await snapshot(leaseId, { transport: 'session' })).status).toBe(200);
    d.sim.setFault({ stall: true });
    let released: Answer;
    try {
      released = await api('DELETE', `/v1/leases/${leaseId}`);
    } finally {
      d.sim.clearFault();
    }
    const lifted = performance.now();
    // Answered while the stall held (lifted only after the answer): it did not wait for the device.
    expect(released.status, brief(released.body)).toBe(200);
    // The teardown finished in time (its record), or it is still running (pending, never both).
    if (released.body.teardown === null) {
      expect(released.body.teardownPending).toMatchObject({ waitedMs: RELEASE_WAIT_MS });
    } else {
      expect(released.body.teardownPending).toBeUndefined();
    }
    const record = await teardownRecord(leaseId, 60_000);
    expect(record.failures).toEqual([]);
    expect(record.actions).not.toContain('quarantined device');
    expect(await forwardsOf(d.sim.serial), 'forwards left').toEqual([]);
    expect(d.sim.runningHelpers(), 'helpers left running').toBe(0);
    const device = (await api('GET', '/v1/devices')).body.devices.find((x: Json) => x.id === d.id);
    expect(device.state).not.toBe('quarantined');
    rows.push({
      fault: 'release during a stall',
      code: released.body.teardown === null ? 'ok (200, teardown pending)' : 'ok (200)',
      retryable: '-',
      recoveryS: ((performance.now() - lifted) / 1000).toFixed(2),
      boundS: 60,
    });
  }, 90_000);
});

describe('chaos: the end state', () => {
  it('0 forwards, 0 helpers, every device online and none quarantined, no lease lost', async () => {
    expect(await bridge.node.adb.client.listForwards({ timeoutMs: 5000 })).toEqual([]);
    for (const d of devices) expect(d.sim.runningHelpers(), d.sim.serial).toBe(0);
    // The last fault's device comes back with the health pass after its stall was lifted.
    const listed = await waitFor(
      async () => {
        const all = (await api('GET', '/v1/devices')).body.devices as Json[];
        return all.every((x) => x.state === 'online') ? all : false;
      },
      { what: 'every device online again', timeoutMs: 30_000 },
    ).catch(async () => (await api('GET', '/v1/devices')).body.devices as Json[]);
    expect(listed.map((x) => x.state)).toEqual(devices.map(() => 'online'));
    expect((await api('GET', '/v1/leases')).body.leases).toEqual([]);
    for (const id of leasesTaken) {
      expect((await api('GET', `/v1/leases/${id}`)).body.state, id).toBe('released');
    }
  });
});
