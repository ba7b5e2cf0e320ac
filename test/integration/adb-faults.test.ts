/**
 * The ADB layer under faults (issue #15, part A), through the real adb server and the simulator over
 * TCP: every read has a deadline, the server manager is the only one that starts adb, forwards that
 * adb already dropped count as removed, unauthorized devices are retried, stray forwards reconciled.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { AdbClient } from '../../src/adb/client.ts';
import { TcpAdbServerConnector } from '../../src/adb/connector.ts';
import { AdbRuntime } from '../../src/adb/runtime.ts';
import { AdbServer, adbServerPidFile } from '../../src/adb/server.ts';
import { TunnelManager } from '../../src/adb/tunnels.ts';
import { EndpointPolicy } from '../../src/devices/endpoint-policy.ts';
import { MemoryDeviceStore } from '../../src/devices/memory-store.ts';
import { DeviceRegistry } from '../../src/devices/registry.ts';
import { SnapshotDriver } from '../../src/helpers/snapshot/driver.ts';
import { EnsureVerdicts } from '../../src/helpers/snapshot/ensure-helper.ts';
import { DEVICE_FEATURES, deviceBanner } from '../../src/simulator/adbd/connection.ts';
import { type SimulatedDevice, startSimulator } from '../../src/simulator/index.ts';
import { afterHealthPasses, tempDir } from '../support/bridge.ts';
import {
  type DeviceBed,
  fixtureApk,
  fixtureManifest,
  freePort,
  startDeviceBed,
} from '../support/device-bed.ts';
import { waitFor } from '../support/wait-for.ts';

const NO_ANSWER = Symbol('no answer');

/** Settle `work` or give up after `ms`: NO_ANSWER when it hung, else the value or the error. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | unknown | typeof NO_ANSWER> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<typeof NO_ANSWER>((resolve) => {
    timer = setTimeout(() => resolve(NO_ANSWER), ms);
  });
  try {
    return await Promise.race([work.catch((err: unknown) => err), hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** The bytes a device sends in its CNXN answer (header + banner): the drop-after-bytes budget starts there. */
function cnxnBytes(d: SimulatedDevice): number {
  return 24 + Buffer.byteLength(deviceBanner(d.android.bannerProps(), DEVICE_FEATURES));
}

/** Re-connect `d` through adb so its next connection starts with the current faults. */
async function reconnect(bed: DeviceBed, d: SimulatedDevice): Promise<void> {
  await bed.client.disconnect(d.address);
  await bed.client.connect(d.address);
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if ((await bed.client.devices()).find((x) => x.serial === d.serial)?.state === 'device') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${d.address} did not come back as device`);
}

describe('defect 1: no adb read without a deadline', () => {
  let bed: DeviceBed | undefined;
  afterEach(async () => {
    await bed?.close();
    bed = undefined;
  });

  it('a shell whose open is refused (link dropped inside the OKAY) fails typed within its deadline', async () => {
    bed = await startDeviceBed();
    const d = bed.sim.devices[0]!;
    // The device sends its CNXN answer and 4 bytes of the shell's OKAY, then the link drops: adb
    // answers the shell open with FAIL and closes.
    d.setFaults({ dropAfterBytes: cnxnBytes(d) + 4 });
    await reconnect(bed, d);
    const outcome = await within(bed.client.shell(d.serial, 'echo ok', { timeoutMs: 2000 }), 10_000);
    expect(outcome, 'shell never answered').not.toBe(NO_ANSWER);
    expect(outcome).toMatchObject({ retryable: true });
    const { code, message } = outcome as { code: string; message: string };
    expect(['DEVICE_OFFLINE', 'TIMEOUT']).toContain(code);
    // A timeout is the call's own deadline (named), not a later one.
    if (code === 'TIMEOUT') expect(message).toContain('within 2000 ms');
  });

  it('a shell has one deadline for the whole call: a slow open leaves the exit only what remains', async () => {
    bed = await startDeviceBed();
    const d = bed.sim.devices[0]!;
    const timeoutMs = 1500;
    // Every device message arrives 1.1 s late: the shell's open takes most of the deadline, then
    // the command never exits. One deadline fails at ~1.5 s; one per phase would take ~2.6 s.
    d.setFaults({ latencyMs: 1100 });
    const started = Date.now();
    const outcome = await within(bed.client.shell(d.serial, 'sleep 30', { timeoutMs }), 10_000);
    const elapsed = Date.now() - started;
    expect(outcome, 'shell never answered').not.toBe(NO_ANSWER);
    expect(outcome).toMatchObject({ code: 'TIMEOUT' });
    expect(elapsed, 'it waited for its deadline').toBeGreaterThanOrEqual(timeoutMs - 50);
    // One budget, not one per phase: the message names the whole call's deadline (the budget's
    // arithmetic is pinned on fake timers in test/unit/adb-deadline.test.ts).
    expect((outcome as { message: string }).message).toContain(`within ${timeoutMs} ms`);
  });

  it('drop-after-bytes: ensure fails typed instead of hanging, and the device lock is free again', async () => {
    bed = await startDeviceBed();
    const d = bed.sim.devices[0]!;
    const manifest = fixtureManifest('snapshot-helper-v1.apk');
    const driver = new SnapshotDriver(bed.device(), manifest, {
      verdicts: new EnsureVerdicts(),
      apk: fixtureApk(bed.cache, 'snapshot-helper-v1.apk', manifest),
    });
    // drop-after-bytes, landed inside the first shell's OKAY on a fresh connection.
    d.setFaults({ dropAfterBytes: cnxnBytes(d) + 4 });
    await reconnect(bed, d);
    const outcome = await within(driver.ensure(), 30_000);
    expect(outcome, 'ensure never answered').not.toBe(NO_ANSWER);
    expect(outcome).toMatchObject({ retryable: true });
    // The write lock ensure held is free: with the fault lifted the next ensure runs and installs.
    d.setFaults({});
    await reconnect(bed, d);
    const again = await within(driver.ensure(), 30_000);
    expect(again).toMatchObject({ action: 'installed' });
  });
});

/** Processes other than `except` that serve adb on `port` (a daemon `adb start-server` forked). */
function adbServersOn(port: number, except: number | undefined): Array<{ pid: number; cmdline: string }> {
  const found: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === except) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      continue;
    }
    const ours = /(^|\/)adb /.test(cmdline) && /\bserver\b/.test(cmdline);
    if (ours && (cmdline.includes(`tcp:${port}`) || cmdline.includes(`-P ${port} `))) {
      found.push({ pid: Number(entry), cmdline });
    }
  }
  return found;
}

async function startRuntime(): Promise<AdbRuntime> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await AdbRuntime.start({ port: await freePort() });
    } catch {
      // port taken: try another
    }
  }
  throw new Error('could not start a private adb server');
}

describe('defect 2: the adb server SIGKILLed under traffic', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it('is restarted a bounded number of times by the bridge only, and the device is online again', async () => {
    const sim = await startSimulator({ port: 0, count: 1 });
    cleanups.push(() => sim.close());
    const runtime = await startRuntime();
    const port = runtime.server.port;
    cleanups.push(async () => {
      await runtime.close();
      // A daemon adbkit or a CLI started behind the bridge's back would outlive it: end it here.
      for (const foreign of adbServersOn(port, undefined)) process.kill(foreign.pid, 'SIGKILL');
    });
    const registry = new DeviceRegistry({
      store: new MemoryDeviceStore(),
      client: runtime.client,
      tunnels: runtime.tunnels,
      policy: new EndpointPolicy(),
      node: 'node-a',
      healthIntervalMs: 250,
      probeTimeoutMs: 2000,
    });
    cleanups.push(() => registry.stop());
    const record = await registry.register({ endpoint: sim.devices[0]!.address });
    expect(record.state).toBe('online');
    registry.start();
    let exits = 0;
    runtime.server.on('exit', () => {
      exits += 1;
    });

    // Traffic: three callers keep talking to adb through adbkit the whole time.
    let traffic = true;
    let answered = 0;
    const callers = [0, 1, 2].map(async (i) => {
      while (traffic) {
        await (i === 0
          ? runtime.client.devices({ timeoutMs: 1000 })
          : runtime.client.shell(record.serial, 'echo ok', { timeoutMs: 1000 })
        ).then(
          () => {
            answered += 1;
          },
          () => undefined,
        );
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    cleanups.push(async () => {
      traffic = false;
      await Promise.all(callers);
    });

    const killedPid = runtime.server.pid!;
    const killedAt = Date.now();
    process.kill(killedPid, 'SIGKILL');
    // Back online without operator action within 20 s.
    const until = killedAt + 20_000;
    let state = (await registry.get(record.id)).state;
    while (Date.now() < until) {
      state = (await registry.get(record.id)).state;
      if (state === 'online' && exits > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(state, `device ${state} 20 s after the kill`).toBe('online');
    expect(exits).toBeGreaterThanOrEqual(1);
    // Traffic goes on for a while: the server stays up, nobody restarts it again. "A while" is
    // eight more health passes (each lists devices through the server) and 100 more answered calls.
    const answeredBefore = answered;
    await afterHealthPasses(registry, 8);
    while (answered < answeredBefore + 100) await new Promise((r) => setTimeout(r, 20));
    traffic = false;
    await Promise.all(callers);
    expect(exits, 'server exits after the one kill (a restart loop)').toBeLessThanOrEqual(1);
    expect(runtime.server.restarts).toBe(1);
    expect(runtime.server.pid).toBeDefined();
    expect(runtime.server.pid).not.toBe(killedPid);
    expect(adbServersOn(port, runtime.server.pid), 'adb servers the bridge did not start').toEqual([]);
    expect((await registry.get(record.id)).state).toBe('online');
    expect(
      (await runtime.client.shell(record.serial, 'echo ok', { timeoutMs: 5000 })).stdout.toString(),
    ).toBe('ok\n');
  }, 60_000);
});

describe('defect 2: readiness means our server', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it('a server someone else started on the port is neither adopted nor killed; ours replaces it once it is gone; tunnels follow', async () => {
    const sim = await startSimulator({ port: 0, count: 1 });
    cleanups.push(() => sim.close());
    // The server's log says each time a restart attempt finds the port taken by a foreign server.
    const refusals: string[] = [];
    const logger = pino(
      { level: 'error' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n')) {
            if (line.includes('taken by a server this bridge did not start')) refusals.push(line);
          }
          done();
        },
      }),
    );
    let server: AdbServer | undefined;
    for (let attempt = 0; attempt < 5 && !server; attempt++) {
      const candidate = new AdbServer({
        port: await freePort(),
        backoffMs: 1500,
        maxBackoffMs: 3000,
        logger,
      });
      await candidate.start(10_000).then(
        () => {
          server = candidate;
        },
        () => candidate.stop(),
      );
    }
    if (!server) throw new Error('could not start a private adb server');
    const own = server;
    cleanups.push(() => own.stop());
    const client = new AdbClient(own.connector);
    const tunnels = new TunnelManager({ client, server: own, initialBackoffMs: 100, maxBackoffMs: 1000 });
    await tunnels.start();
    cleanups.push(async () => tunnels.stop());
    const address = sim.devices[0]!.address;
    await tunnels.add(address);
    expect(await tunnels.waitFor(address, 'device', 10_000)).toBe(true);
    const changes: Array<{ restarts: number; adopted: boolean }> = [];
    own.on('restarted', (e: { restarts: number; adopted: boolean }) => changes.push(e));
    let exits = 0;
    own.on('exit', () => {
      exits += 1;
    });

    // Our server dies; before the manager's restart someone else's daemon takes the port.
    process.kill(own.pid!, 'SIGKILL');
    const foreign = spawn('adb', ['-P', String(own.port), 'server', 'nodaemon'], { stdio: 'ignore' });
    cleanups.push(async () => {
      foreign.kill('SIGKILL');
    });
    // Two restart attempts later (1.5 s, 3 s backoff), each of which found it, it is still theirs:
    // not adopted, not killed.
    await waitFor(() => refusals.length >= 2, {
      what: 'two restart attempts that found the foreign server',
      timeoutMs: 20_000,
    });
    expect(changes).toEqual([]);
    expect(own.pid).toBeUndefined();
    expect(foreign.exitCode).toBeNull();

    // The foreign daemon goes away: our own server takes the port, `restarted` fires, tunnels follow.
    const replaced = new Promise((r) => own.once('restarted', r));
    foreign.kill('SIGKILL');
    await replaced;
    expect(changes).toEqual([{ restarts: 1, adopted: false }]);
    expect(own.pid).toBeDefined();
    expect(exits).toBe(1);
    expect(await tunnels.waitFor(address, 'device', 10_000)).toBe(true);
    expect((await client.shell(address, 'echo ok', { timeoutMs: 5000 })).stdout.toString()).toBe('ok\n');
    expect(adbServersOn(own.port, own.pid)).toEqual([]);
  }, 60_000);
});

describe('defect 6: unauthorized devices are retried', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it('an unauthorized device is probed again with backoff and comes back online once the key is accepted', async () => {
    const bed = await startDeviceBed();
    cleanups.push(() => bed.close());
    const locked = await startSimulator({ port: 0, count: 1, requireAuth: true });
    cleanups.push(() => locked.close());
    const registry = new DeviceRegistry({
      store: new MemoryDeviceStore(),
      client: bed.client,
      tunnels: bed.tunnels,
      policy: new EndpointPolicy(),
      node: 'node-a',
      healthIntervalMs: 200,
      quarantineAfterFailures: 2,
    });
    cleanups.push(() => registry.stop());
    const d = locked.devices[0]!;
    const record = await registry.register({ endpoint: d.address });
    expect(record.state).toBe('unauthorized');
    registry.start();
    const states: string[] = [];
    registry.on('state', (e: { state: string }) => states.push(e.state));

    // The user accepts the key: without operator action the device is online within 10 s (the
    // tunnel manager's backoff here is 100 ms doubling to 1 s).
    d.acceptKey();
    const acceptedAt = Date.now();
    let state = record.state;
    while (Date.now() - acceptedAt < 10_000 && state !== 'online') {
      await new Promise((r) => setTimeout(r, 50));
      state = (await registry.get(record.id)).state;
    }
    expect(state, `still ${state} 10 s after the key was accepted`).toBe('online');
    // Retrying never counted as a health failure, let alone quarantined the device.
    expect(states).not.toContain('quarantined');
    expect((await registry.get(record.id)).consecutiveFailures).toBe(0);
    expect((await bed.client.shell(d.serial, 'echo ok', { timeoutMs: 5000 })).stdout.toString()).toBe('ok\n');
    await bed.tunnels.remove(d.address);
  }, 60_000);
});

describe('defect 2: the health loop re-connects tunnels adb lost', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it('a server change nobody reported: the tracked tunnel is re-connected by the health loop', async () => {
    const sim = await startSimulator({ port: 0, count: 1 });
    cleanups.push(() => sim.close());
    let first: AdbServer | undefined;
    for (let attempt = 0; attempt < 5 && !first; attempt++) {
      const candidate = new AdbServer({ port: await freePort() });
      await candidate.start(10_000).then(
        () => {
          first = candidate;
        },
        () => candidate.stop(),
      );
    }
    if (!first) throw new Error('could not start a private adb server');
    const port = first.port;
    const client = new AdbClient(new TcpAdbServerConnector({ port }));
    // No server to listen to: this tunnel manager never hears of the change below.
    const tunnels = new TunnelManager({ client, initialBackoffMs: 100, maxBackoffMs: 1000 });
    await tunnels.start();
    cleanups.push(async () => tunnels.stop());
    const registry = new DeviceRegistry({
      store: new MemoryDeviceStore(),
      client,
      tunnels,
      policy: new EndpointPolicy(),
      node: 'node-a',
      healthIntervalMs: 200,
      quarantineAfterFailures: 1000,
    });
    cleanups.push(() => registry.stop());
    const address = sim.devices[0]!.address;
    const record = await registry.register({ endpoint: address });
    expect(record.state).toBe('online');
    registry.start();

    // The server is replaced behind the tunnel manager's back: the new one knows no device.
    await first.stop();
    const second = new AdbServer({ port });
    await second.start(10_000);
    cleanups.push(() => second.stop());
    const replacedAt = Date.now();
    let listed: string | undefined;
    while (Date.now() - replacedAt < 10_000) {
      listed = (await client.devices({ timeoutMs: 2000 }).catch(() => [])).find(
        (d) => d.serial === address,
      )?.state;
      if (listed === 'device' && (await registry.get(record.id)).state === 'online') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed, 'adb lists the device again').toBe('device');
    expect((await registry.get(record.id)).state).toBe('online');
    expect(tunnels.status(address)?.state).toBe('device');
  }, 60_000);
});

describe('defect 4: a forward adb already dropped is removed, not a teardown failure', () => {
  let bed: DeviceBed | undefined;
  afterEach(async () => {
    await bed?.close();
    bed = undefined;
  });

  it('release after the device went offline (adb dropped its forwards) reports every forward removed', async () => {
    bed = await startDeviceBed();
    const d = bed.sim.devices[0]!;
    const a = await bed.ledger.open('lease-offline', d.serial, 'tcp:0', 'tcp:9000');
    const b = await bed.ledger.open('lease-offline', d.serial, 'tcp:0', 'localabstract:helper');
    expect((await bed.client.listForwards()).map((f) => f.local).sort()).toEqual([a.local, b.local].sort());
    // The device stops answering: adb marks it offline and drops its forwards by itself.
    d.setFaults({ offlineAfterMs: 1 });
    d.disconnectAll();
    const until = Date.now() + 15_000;
    let state: string | undefined = 'device';
    while (Date.now() < until) {
      state = (await bed.client.devices()).find((x) => x.serial === d.serial)?.state;
      if (state !== 'device' && (await bed.client.listForwards()).length === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(state).not.toBe('device');
    expect(await bed.client.listForwards()).toEqual([]);
    const report = await bed.ledger.release('lease-offline');
    expect(report.failed).toEqual([]);
    expect(report.removed.map((f) => f.local).sort()).toEqual([a.local, b.local].sort());
    expect(bed.ledger.entries('lease-offline')).toEqual([]);
    d.setFaults({});
  }, 60_000);

  it('a forward that is still there and cannot be removed stays a failure', async () => {
    bed = await startDeviceBed();
    const d = bed.sim.devices[0]!;
    const entry = await bed.ledger.open('lease-live', d.serial, 'tcp:0', 'tcp:9000');
    // The adb server is gone: the forward cannot be removed nor shown to be gone.
    bed.tunnels.stop();
    await bed.server.stop();
    const report = await bed.ledger.release('lease-live', { timeoutMs: 2000 });
    expect(report.removed).toEqual([]);
    expect(report.failed.map((f) => f.local)).toEqual([entry.local]);
    expect(bed.ledger.entries('lease-live')).toHaveLength(1);
  });
});

describe('forward reconcile at start-up and after every adb server change', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it("a killed bridge's forwards left on its private adb server are removed when the next bridge starts", async () => {
    const sim = await startSimulator({ port: 0, count: 1 });
    cleanups.push(() => sim.close());
    const d = sim.devices[0]!;
    // The previous bridge: its adb server on the private port, a device and two lease forwards; then
    // the bridge is SIGKILLed and only its server (a separate process) is left.
    let port = 0;
    let leftover: ReturnType<typeof spawn> | undefined;
    for (let attempt = 0; attempt < 5 && !leftover; attempt++) {
      port = await freePort();
      const child = spawn('adb', ['-P', String(port), 'server', 'nodaemon'], { stdio: 'ignore' });
      const until = Date.now() + 10_000;
      let up = false;
      while (!up && child.exitCode === null && Date.now() < until) {
        up = await new AdbClient(new TcpAdbServerConnector({ port })).devices({ timeoutMs: 500 }).then(
          () => true,
          () => false,
        );
        if (!up) await new Promise((r) => setTimeout(r, 100));
      }
      if (up) leftover = child;
      else child.kill('SIGKILL');
    }
    if (!leftover) throw new Error('could not start the leftover adb server');
    const child = leftover;
    cleanups.push(async () => {
      child.kill('SIGKILL');
    });
    const previous = new AdbClient(new TcpAdbServerConnector({ port }));
    await previous.connect(d.address);
    const until = Date.now() + 10_000;
    while ((await previous.devices()).find((x) => x.serial === d.serial)?.state !== 'device') {
      if (Date.now() > until) throw new Error('device did not come up on the leftover server');
      await new Promise((r) => setTimeout(r, 50));
    }
    await previous.forward(d.serial, 'tcp:0', 'tcp:9000');
    await previous.forward(d.serial, 'tcp:0', 'localabstract:helper');
    expect(await previous.listForwards()).toHaveLength(2);

    // The next bridge on the same private port adopts the server (the killed bridge's pid file in the
    // data dir proves it started it) and reconciles at start-up.
    const state = await tempDir();
    cleanups.push(() => state.cleanup());
    writeFileSync(adbServerPidFile(state.dir, port), `${child.pid}\n`);
    const events: unknown[] = [];
    const runtime = await AdbRuntime.start({ port, stateDir: state.dir });
    cleanups.push(() => runtime.close());
    runtime.on('reconciled', (e) => events.push(e));
    expect(runtime.server.external).toBe(false);
    expect(await runtime.client.listForwards()).toEqual([]);
    // A second reconcile finds nothing left to do.
    expect(await runtime.reconcile('start')).toMatchObject({ removedStrays: [], forgotten: [] });
    expect(events).toHaveLength(1);
  }, 60_000);

  it('after the adb server is restarted the ledger forgets the forwards the server lost', async () => {
    const sim = await startSimulator({ port: 0, count: 1 });
    cleanups.push(() => sim.close());
    const runtime = await startRuntime();
    cleanups.push(() => runtime.close());
    const d = sim.devices[0]!;
    await runtime.tunnels.add(d.address);
    expect(await runtime.tunnels.waitFor(d.address, 'device', 10_000)).toBe(true);
    const entry = await runtime.ledger.open('lease-1', d.serial, 'tcp:0', 'tcp:9000');
    expect(runtime.ledger.entries('lease-1')).toHaveLength(1);
    const reconciled = new Promise<{ reason: string; forgotten: Array<{ local: string }> }>((resolve) =>
      runtime.on('reconciled', resolve),
    );
    process.kill(runtime.server.pid!, 'SIGKILL');
    const outcome = await within(reconciled, 20_000);
    expect(outcome, 'no reconcile after the restart').not.toBe(NO_ANSWER);
    const event = outcome as Awaited<typeof reconciled>;
    expect(event.reason).toBe('restarted');
    expect(event.forgotten.map((f) => f.local)).toEqual([entry.local]);
    expect(runtime.ledger.entries()).toEqual([]);
    // Releasing the lease afterwards has nothing left to fail on.
    expect(await runtime.ledger.release('lease-1')).toEqual({ removed: [], failed: [] });
  }, 60_000);
});
