/**
 * Soak (opt-in, not part of `npm test`): `npm run soak [-- --seconds N]` (or SOAK_SECONDS; default
 * 600). One bridge (leases in memory), 10 simulated devices behind its real adb server, 10 clients
 * leasing any device and running random operations (snapshots through every transport, viewport,
 * gestures, ensure, the glass agent's clipboard, text and keys, two one-shot calls at once on the
 * lease, releases racing an operation), while a fault injector switches a random fault on a random
 * device for 0.3–2 s, over and over (the transport faults re-establish the device's adb connection
 * under a running glass agent; two faults hit the agent itself: it dies, or runs on deaf). Every
 * answer must be a success or a typed error (`INTERNAL`, an unclassified failure, counts as a
 * violation). A call on a device no fault touched while it ran must succeed (two one-shot calls at
 * once included: they take turns; they never kill each other).
 *
 * Some leases end with a fault of their client's own on their device (one the injector leaves
 * alone meanwhile): a release during a stall must answer within the release wait plus a margin,
 * with the teardown's record or `teardownPending`; a release during a short offline fault (0.5–3 s)
 * must answer, and its device must come back (not quarantined). Teardowns still pending are
 * awaited at the end; each must be recorded without failures.
 *
 * At the end the faults are lifted and the soak checks: every device back online (none
 * quarantined), 0 forwards on the adb server, 0 helpers and 0 glass agents running on any device,
 * no active lease, every lease ended `released`. Prints a summary (JSON and a table) and exits 1 on any violation.
 */
import { ERROR_CODES } from '../../src/errors.ts';
import type { Faults, SimulatedDevice } from '../../src/simulator/index.ts';
import { tempDir, testDeviceBridge } from '../support/bridge.ts';
import { GLASS_AGENT_MAIN } from '../support/device-bed.ts';
import { publishGlassAgent } from '../support/glass.ts';

type Json = Record<string, any>;

function secondsArg(): number {
  const i = process.argv.indexOf('--seconds');
  const text = i >= 0 ? process.argv[i + 1] : process.env['SOAK_SECONDS'];
  const value = text === undefined ? 600 : Number(text);
  if (!Number.isInteger(value) || value < 5 || value > 24 * 3600) {
    process.stderr.write(`--seconds must be an integer from 5 to 86400, got ${text}\n`);
    process.exit(2);
  }
  return value;
}

const SECONDS = secondsArg();
const DEVICES = 10;
const CLIENTS = 10;
/** DEVICEBRIDGE_RELEASE_WAIT_MS of the soak's bridge, and the slack a release answer may take beyond it. */
const RELEASE_WAIT_MS = 2000;
const RELEASE_MARGIN_MS = 1500;
const FAULTS: Array<[string, (d: SimulatedDevice) => void]> = [
  ['latency-ms=100', (d) => d.setFault({ latencyMs: 100 })],
  ['bandwidth=128k', (d) => d.setFault({ bandwidthBytesPerSec: 128 * 1024 })],
  ['drop-after-bytes=4096', (d) => d.setFault({ dropAfterBytes: 4096 })],
  ['stall', (d) => d.setFault({ stall: true })],
  ['offline', (d) => d.setFault({ offlineAfterMs: 0 })],
  ['cable pull', (d) => d.unplug()],
  ['unauthorized', (d) => d.setFault({ unauthorized: true })],
  ['helper-crash', (d) => d.setFault({ helperCrash: true })],
  ['helper-timeout', (d) => d.setFault({ helperTimeout: true })],
  ['chunk=corrupt:0', (d) => d.setFault({ chunk: { action: 'corrupt', index: 0 } } as Faults)],
  ['chunk=drop:0', (d) => d.setFault({ chunk: { action: 'drop', index: 0 } } as Faults)],
  ['install-failure', (d) => d.setFault({ installFailure: 'INSTALL_FAILED_INSUFFICIENT_STORAGE' })],
  ['glass-agent-death', (d) => d.setFault({ glassAgentDeath: true })],
  ['glass-agent-deaf', (d) => d.setFault({ glassAgentDeaf: true })],
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

const bridge = await testDeviceBridge({
  simulate: DEVICES,
  env: { DEVICEBRIDGE_HEALTH_INTERVAL_MS: '1000', DEVICEBRIDGE_RELEASE_WAIT_MS: String(RELEASE_WAIT_MS) },
});
const sims = bridge.node.simulator!.devices;
const glassDir = await tempDir();
await publishGlassAgent(bridge.services.store, glassDir.dir, { version: '1.0.0' });
/**
 * Devices with a fault on now (the injector's or a client's own): a fault is set only on a device
 * not in here. `touched` counts every fault set or lifted on a device, so a client can tell that
 * no fault touched its device while its calls ran.
 */
const faulted = new Set<SimulatedDevice>();
const touched = new Map<SimulatedDevice, number>();
function faultOn(d: SimulatedDevice, apply: (d: SimulatedDevice) => void): boolean {
  if (faulted.has(d)) return false;
  faulted.add(d);
  touched.set(d, (touched.get(d) ?? 0) + 1);
  apply(d);
  return true;
}
function faultOff(d: SimulatedDevice): void {
  d.clearFault();
  d.plug();
  touched.set(d, (touched.get(d) ?? 0) + 1);
  faulted.delete(d);
}

async function api(method: string, path: string, body?: unknown) {
  const res = await bridge.app.request(path, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
}

/** The simulated device behind each device id. */
const simOf = new Map<string, SimulatedDevice>();
for (const d of (await api('GET', '/v1/devices')).body.devices as Json[]) {
  const sim = sims.find((x) => x.serial === d.serial);
  if (sim) simOf.set(d.id as string, sim);
}

const outcomes = new Map<string, number>();
const faultsApplied = new Map<string, number>();
const violations: string[] = [];
/** One message per error code seen, for the summary. */
const examples = new Map<string, string>();
const leases: string[] = [];
/** Leases whose release answered with the teardown still running. */
const pending: string[] = [];
/** The special releases: how many, and the slowest answer (ms). */
const specialReleases = { stall: 0, offline: 0, pending: 0, slowestMs: 0 };
let operations = 0;

function record(op: string, res: { status: number; body: Json }): void {
  operations++;
  const error = res.body?.error;
  const key = res.status < 300 ? `${op} ${res.status}` : `${op} ${error?.code ?? res.status}`;
  outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  if (res.status >= 300) {
    if (error?.code && !examples.has(error.code))
      examples.set(error.code, String(error.message).slice(0, 200));
    const known = error && Object.hasOwn(ERROR_CODES, error.code) && typeof error.retryable === 'boolean';
    if (!known)
      violations.push(`${op}: untyped answer ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    // INTERNAL is a failure nobody classified: a bug, not an answer.
    else if (error.code === 'INTERNAL')
      violations.push(`${op}: INTERNAL ${String(error.message).slice(0, 200)}`);
  }
}

const ops: Array<[string, (id: string) => Promise<{ status: number; body: Json }>]> = [
  [
    'snapshot auto',
    (id) => api('POST', `/v1/leases/${id}/snapshot`, { format: 'xml', timeoutMs: 2000, deadlineMs: 4000 }),
  ],
  [
    'snapshot one-shot',
    (id) =>
      api('POST', `/v1/leases/${id}/snapshot`, { transport: 'one-shot', timeoutMs: 2000, deadlineMs: 4000 }),
  ],
  [
    'snapshot session',
    (id) =>
      api('POST', `/v1/leases/${id}/snapshot`, { transport: 'session', timeoutMs: 2000, deadlineMs: 4000 }),
  ],
  ['viewport', (id) => api('GET', `/v1/leases/${id}/viewport?deadlineMs=4000`)],
  [
    'gesture',
    (id) => api('POST', `/v1/leases/${id}/gestures`, { kind: 'tap', x: 50, y: 60, deadlineMs: 4000 }),
  ],
  ['ensure', (id) => api('POST', `/v1/leases/${id}/helpers/android-snapshot-helper/ensure`, {})],
  ['glass clipboard', (id) => api('PUT', `/v1/leases/${id}/clipboard`, { text: 'soak ✓ 日本' })],
  ['glass text', (id) => api('POST', `/v1/leases/${id}/text`, { text: 'héllo' })],
  ['glass key', (id) => api('POST', `/v1/leases/${id}/keys`, { chord: 'ctrl+a' })],
];

const oneShotSnapshot = (id: string) =>
  api('POST', `/v1/leases/${id}/snapshot`, { transport: 'one-shot', timeoutMs: 2000, deadlineMs: 4000 });
const oneShotTap = (id: string) =>
  api('POST', `/v1/leases/${id}/gestures`, {
    kind: 'tap',
    x: 50,
    y: 60,
    transport: 'one-shot',
    deadlineMs: 4000,
  });

type Answer = { status: number; body: Json };

/**
 * Run `calls` on the lease's device; when no fault was on it or set or lifted while they ran, every
 * answer must be a success (a failure there is the bridge's, not the fault's).
 */
async function onDevice(
  sim: SimulatedDevice | undefined,
  what: string,
  calls: () => Promise<Answer[]>,
): Promise<Answer[]> {
  const before = sim === undefined || faulted.has(sim) ? -1 : (touched.get(sim) ?? 0);
  const answers = await calls();
  const untouched = sim !== undefined && before >= 0 && !faulted.has(sim) && touched.get(sim) === before;
  const failed = answers.filter((a) => a.status !== 200);
  if (untouched && failed.length > 0) {
    violations.push(
      `${what} on a device without faults failed: ${failed
        .map((a) => `${a.body?.error?.code}: ${String(a.body?.error?.message).slice(0, 160)}`)
        .join('; ')}`,
    );
  }
  return answers;
}

/** Two one-shot calls at once on the lease (they take turns; they never kill each other). */
async function oneShotPair(id: string, sim: SimulatedDevice | undefined): Promise<void> {
  const second = Math.random() < 0.5 ? oneShotSnapshot : oneShotTap;
  const answers = await onDevice(sim, 'one-shot pair', () => Promise.all([oneShotSnapshot(id), second(id)]));
  record('one-shot pair: snapshot', answers[0]!);
  record(`one-shot pair: ${second === oneShotTap ? 'tap' : 'snapshot'}`, answers[1]!);
}

/**
 * Release while the lease's device stalls or is offline for a moment (a fault of this client's own,
 * lifted after the answer or after 0.5–3 s): bounded, with the record or `teardownPending`.
 */
async function releaseDuringFault(
  id: string,
  sim: SimulatedDevice,
  kind: 'stall' | 'offline',
): Promise<void> {
  if (kind === 'stall') {
    if (!faultOn(sim, (d) => d.setFault({ stall: true }))) return releaseNormally(id);
  } else {
    if (!faultOn(sim, (d) => d.setFault({ offlineAfterMs: 0 }))) return releaseNormally(id);
    setTimeout(() => faultOff(sim), 500 + Math.random() * 2500);
  }
  const started = performance.now();
  let rel: { status: number; body: Json };
  try {
    rel = await api('DELETE', `/v1/leases/${id}`);
  } finally {
    if (kind === 'stall') faultOff(sim);
  }
  const ms = performance.now() - started;
  specialReleases[kind]++;
  specialReleases.slowestMs = Math.max(specialReleases.slowestMs, Math.round(ms));
  record(`release during ${kind}`, rel);
  if (rel.status === 200) {
    if (ms > RELEASE_WAIT_MS + RELEASE_MARGIN_MS)
      violations.push(`release during ${kind} answered after ${Math.round(ms)} ms`);
    if (rel.body.teardown === null) {
      if (rel.body.teardownPending === undefined)
        violations.push(`release during ${kind}: neither a teardown record nor teardownPending`);
      else {
        pending.push(id);
        specialReleases.pending++;
      }
    }
  }
  teardownFailures(rel);
}

async function releaseNormally(id: string): Promise<void> {
  const rel = await api('DELETE', `/v1/leases/${id}`);
  record('release', rel);
  if (rel.status === 200 && rel.body.teardown === null && rel.body.teardownPending !== undefined)
    pending.push(id);
  teardownFailures(rel);
}

const endAt = Date.now() + SECONDS * 1000;

async function client(): Promise<void> {
  while (Date.now() < endAt) {
    const acquired = await api('POST', '/v1/leases', { ttlSeconds: 120, waitSeconds: 10 });
    record('acquire', acquired);
    if (acquired.status !== 201) {
      await sleep(200);
      continue;
    }
    const id = acquired.body.id as string;
    const sim = simOf.get(acquired.body.deviceId as string);
    leases.push(id);
    const rounds = 1 + Math.floor(Math.random() * 6);
    for (let i = 0; i < rounds && Date.now() < endAt; i++) {
      if (Math.random() < 0.15) {
        await oneShotPair(id, sim);
        continue;
      }
      const [name, op] = pick(ops);
      const [res] = await onDevice(sim, name, async () => [await op(id)]);
      record(name, res!);
    }
    const ending = Math.random();
    if (sim !== undefined && ending < 0.08) {
      await releaseDuringFault(id, sim, 'stall');
    } else if (sim !== undefined && ending < 0.16) {
      await releaseDuringFault(id, sim, 'offline');
    } else if (ending < 0.4) {
      // Release racing an operation.
      const [name, op] = pick(ops);
      const running = op(id);
      await sleep(Math.floor(Math.random() * 30));
      const [res, rel] = await Promise.all([running, api('DELETE', `/v1/leases/${id}`)]);
      record(`${name} (racing release)`, res);
      record('release', rel);
      if (rel.status === 200 && rel.body.teardown === null && rel.body.teardownPending !== undefined)
        pending.push(id);
      teardownFailures(rel);
    } else {
      await releaseNormally(id);
    }
  }
}

function teardownFailures(rel: { status: number; body: Json }): void {
  const failures = rel.body?.teardown?.failures as string[] | undefined;
  if (failures && failures.length > 0)
    violations.push(`teardown failed (device quarantined): ${failures.join('; ')}`);
}

async function injector(): Promise<void> {
  while (Date.now() < endAt) {
    const d = pick(sims);
    const [name, apply] = pick(FAULTS);
    if (!faultOn(d, apply)) {
      await sleep(50); // a client's own fault is on it
      continue;
    }
    faultsApplied.set(name, (faultsApplied.get(name) ?? 0) + 1);
    await sleep(300 + Math.random() * 1700);
    faultOff(d);
    await sleep(Math.random() * 1000);
  }
}

const started = Date.now();
process.stderr.write(`soak: ${SECONDS} s, ${DEVICES} devices, ${CLIENTS} clients\n`);
await Promise.all([...Array.from({ length: CLIENTS }, client), injector()]);
// Clients' offline faults still running end on their timers; wait for them, then lift everything.
for (let waited = 0; faulted.size > 0 && waited < 5000; waited += 50) await sleep(50);
for (const d of sims) faultOff(d);

// Teardowns that were still running when their release answered: each recorded, without failures.
for (const id of pending) {
  let teardown: Json | null = null;
  const until = Date.now() + 60_000;
  while (teardown === null && Date.now() < until) {
    teardown = (await bridge.node.leases.teardownOf(id)) as Json | null;
    if (teardown === null) await sleep(100);
  }
  if (teardown === null) violations.push(`teardown of ${id} still not recorded 60 s after the soak`);
  else if ((teardown.failures as string[]).length > 0)
    violations.push(`pending teardown of ${id} failed: ${(teardown.failures as string[]).join('; ')}`);
}

// Every device back online without operator action.
const recoverStarted = Date.now();
let states: string[] = [];
while (Date.now() - recoverStarted < 60_000) {
  states = ((await api('GET', '/v1/devices')).body.devices as Json[]).map((d) => d.state as string);
  if (states.every((s) => s === 'online')) break;
  await sleep(250);
}
const recoverySeconds = Math.round((Date.now() - recoverStarted) / 100) / 10;
for (const d of (await api('GET', '/v1/devices')).body.devices as Json[]) {
  if (d.state !== 'online') {
    violations.push(
      `device ${d.id} ${d.state} 60 s after the faults were lifted ${d.quarantineReason ?? ''}`,
    );
  }
}
const forwards = await bridge.node.adb.client.listForwards({ timeoutMs: 5000 });
if (forwards.length > 0) {
  const ledger = bridge.node.adb.ledger.entries();
  violations.push(
    `${forwards.length} forward(s) left on the adb server: ${forwards
      .map(
        (f) =>
          `${f.serial} ${f.local} -> ${f.remote} (ledger owner: ${ledger.find((e) => e.local === f.local)?.owner ?? 'none'})`,
      )
      .join('; ')}`,
  );
}
const helpers = sims.reduce((n, d) => n + d.runningHelpers(), 0);
if (helpers > 0) violations.push(`${helpers} helper(s) still running`);
const agents = sims.reduce(
  (n, d) => n + d.processes().filter((p) => p.cmdline.includes(GLASS_AGENT_MAIN)).length,
  0,
);
if (agents > 0) violations.push(`${agents} glass agent(s) still running`);
const active = (await api('GET', '/v1/leases')).body.leases as Json[];
if (active.length > 0) violations.push(`${active.length} lease(s) still active`);
let notReleased = 0;
for (const id of leases) if ((await api('GET', `/v1/leases/${id}`)).body.state !== 'released') notReleased++;
if (notReleased > 0) violations.push(`${notReleased} lease(s) not ended as released`);

const summary = {
  seconds: Math.round((Date.now() - started) / 1000),
  devices: DEVICES,
  clients: CLIENTS,
  leases: leases.length,
  operations,
  faults: Object.fromEntries(faultsApplied),
  releasesDuringFaults: specialReleases,
  outcomes: Object.fromEntries([...outcomes].sort()),
  examples: Object.fromEntries(examples),
  endState: {
    devicesOnline: states.filter((s) => s === 'online').length,
    quarantined: states.filter((s) => s === 'quarantined').length,
    forwards: forwards.length,
    helpersRunning: helpers,
    glassAgentsRunning: agents,
    activeLeases: active.length,
    recoverySeconds,
  },
  violations,
};
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
process.stdout.write(
  `\n| operation | outcome | count |\n|---|---|---|\n${[...outcomes]
    .sort()
    .map(([k, n]) => {
      const [op, outcome] = [k.slice(0, k.lastIndexOf(' ')), k.slice(k.lastIndexOf(' ') + 1)];
      return `| ${op} | ${outcome} | ${n} |`;
    })
    .join('\n')}\n`,
);
await bridge.cleanup();
await glassDir.cleanup();
process.stdout.write(violations.length === 0 ? 'soak: OK\n' : `soak: ${violations.length} violation(s)\n`);
process.exit(violations.length === 0 ? 0 : 1);
