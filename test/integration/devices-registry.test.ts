/**
 * DeviceRegistry through the real adb server and simulated devices over TCP (nothing mocked): one
 * private adb server for the file, a fresh simulator, TunnelManager and registry per test.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdbClient } from '../../src/adb/client.ts';
import { AdbServer } from '../../src/adb/server.ts';
import { TunnelManager } from '../../src/adb/tunnels.ts';
import { EndpointPolicy } from '../../src/devices/endpoint-policy.ts';
import { MemoryDeviceStore } from '../../src/devices/memory-store.ts';
import { RedisDeviceStore } from '../../src/devices/redis-store.ts';
import { DeviceRegistry, type DeviceRegistryOptions, type StateEvent } from '../../src/devices/registry.ts';
import { DEFAULT_RESET_POLICY } from '../../src/devices/reset-policy.ts';
import type { DeviceState, DeviceStore } from '../../src/devices/types.ts';
import { BridgeError } from '../../src/errors.ts';
import type { Lease } from '../../src/leases/types.ts';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.ts';
import { tempDir } from '../support/bridge.ts';
import { freePort } from '../support/device-bed.ts';

let server: AdbServer;
let client: AdbClient;

interface Bed {
  sim: Simulator;
  tunnels: TunnelManager;
  store: DeviceStore;
  registry: DeviceRegistry;
  events: StateEvent[];
}

const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const candidate = new AdbServer({ port: await freePort(), backoffMs: 100, maxBackoffMs: 1000 });
    try {
      await candidate.start(10_000);
      server = candidate;
      break;
    } catch {
      await candidate.stop();
    }
  }
  if (!server) throw new Error('could not start a private adb server');
  client = new AdbClient(server.connector);
});

afterAll(async () => {
  await server?.stop();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function bed(
  simOptions: SimulatorOptions = {},
  options: Partial<DeviceRegistryOptions> = {},
): Promise<Bed> {
  const sim = await startSimulator({ port: 0, count: 1, ...simOptions });
  const tunnels = new TunnelManager({ client, server, initialBackoffMs: 100, maxBackoffMs: 500 });
  await tunnels.start();
  const store = options.store ?? new MemoryDeviceStore();
  const registry = new DeviceRegistry({
    store,
    client,
    tunnels,
    policy: new EndpointPolicy(),
    node: 'node-a',
    healthIntervalMs: 60_000,
    probeTimeoutMs: 2000,
    connectWaitMs: 3000,
    ...options,
  });
  const events: StateEvent[] = [];
  registry.on('state', (e: StateEvent) => events.push(e));
  cleanups.push(async () => {
    await registry.stop();
    tunnels.stop();
    for (const d of sim.devices) await client.disconnect(d.address).catch(() => undefined);
    await sim.close();
    await store.close();
  });
  return { sim, tunnels, store, registry, events };
}

async function waitForState(registry: DeviceRegistry, id: string, state: DeviceState, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = await registry.get(id);
    if (record.state === state) return record;
    if (Date.now() > deadline) throw new Error(`${id} did not become ${state} (still ${record.state})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function adbState(serial: string): Promise<string | undefined> {
  return (await client.devices()).find((d) => d.serial === serial)?.state;
}

async function rejection(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    return err as BridgeError;
  }
  throw new Error('expected a rejection');
}

describe('DeviceRegistry: registration', () => {
  it('registers a tunnel: online, properties read with getprop, idempotent, listed and matched', async () => {
    const { sim, registry, events } = await bed({ count: 2 });
    const [d0, d1] = sim.devices as [(typeof sim.devices)[0], (typeof sim.devices)[0]];
    const record = await registry.register({ endpoint: d0.address, labels: { pool: 'ci' }, provider: 'sim' });
    expect(record).toMatchObject({
      id: d0.address.replace(':', '-'),
      serial: d0.address,
      endpoint: d0.address,
      provider: 'sim',
      labels: { pool: 'ci' },
      state: 'online',
      source: 'api',
      ownerNode: 'node-a',
      consecutiveFailures: 0,
      properties: {
        sdk: 34,
        release: '14',
        model: 'DeviceBridge Sim',
        manufacturer: 'DeviceBridge',
        abi: 'x86_64',
      },
    });
    expect(await adbState(d0.address)).toBe('device');
    expect(events).toEqual([{ id: record.id, state: 'online', previous: undefined }]);

    // Same endpoint again: labels/provider updated, nothing duplicated.
    const again = await registry.register({ endpoint: d0.address, labels: { pool: 'gpu' } });
    expect(again.labels).toEqual({ pool: 'gpu' });
    expect(again.provider).toBe('sim');
    expect(again.createdAt).toBe(record.createdAt);
    expect((await registry.list()).map((r) => r.id)).toEqual([record.id]);

    // A second device, for the selector.
    const other = await registry.register({ endpoint: d1.address, labels: { pool: 'ci' } });
    expect(await registry.match({ labels: { pool: 'ci' } })).toEqual({
      matching: [other.id],
      available: [other.id],
      missing: [],
      restoring: false,
    });
    const bySdk = await registry.match({ sdkMin: 34, sdkMax: 34 });
    expect(bySdk.matching).toEqual([record.id, other.id].sort());
    expect((await registry.match({ sdkMin: 35 })).matching).toEqual([]);
    expect((await registry.match({ deviceId: record.id })).matching).toEqual([record.id]);
    await registry.quarantine(other.id, 'admin: flaky screen');
    expect(await registry.match({ labels: { pool: 'ci' } })).toEqual({
      matching: [other.id],
      available: [],
      missing: [],
      restoring: false,
    });
    await expect(registry.match({ sdkMin: 40, sdkMax: 30 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });

    await registry.setHelperStatus(record.id, 'android-snapshot-helper', {
      versionCode: 3,
      sha256: 'A'.repeat(64),
    });
    expect((await registry.get(record.id)).helpers['android-snapshot-helper']).toMatchObject({
      versionCode: 3,
      sha256: 'a'.repeat(64),
    });
    // The installed release's semver is kept with it (the console's device table shows it).
    await registry.setHelperStatus(record.id, 'android-snapshot-helper', {
      versionCode: 4,
      version: '1.4.0-rc.1',
      sha256: 'b'.repeat(64),
    });
    expect((await registry.get(record.id)).helpers['android-snapshot-helper']).toMatchObject({
      versionCode: 4,
      version: '1.4.0-rc.1',
    });
    for (const version of ['v1.2.3', '1.2', '', '1.2.3\n']) {
      const err = await rejection(
        registry.setHelperStatus(record.id, 'android-snapshot-helper', {
          versionCode: 5,
          version,
          sha256: 'c'.repeat(64),
        }),
      );
      expect(err.code, version).toBe('INVALID_ARGUMENT');
      expect(err.message).toContain('semantic version');
    }
    expect((await registry.get(record.id)).helpers['android-snapshot-helper']?.versionCode).toBe(4);
    expect((await rejection(registry.get('nope-1'))).message).toContain('"nope-1" not found');
  });

  it('CONFLICT when the id belongs to a different endpoint', async () => {
    const { sim, registry, store } = await bed();
    const address = sim.devices[0]!.address;
    const id = address.replace(':', '-');
    await store.put({
      id,
      serial: 'elsewhere',
      endpoint: 'elsewhere.example:1',
      labels: {},
      state: 'offline',
      properties: {},
      helpers: {},
      source: 'api',
      ownerNode: 'node-a',
      consecutiveFailures: 0,
      createdAt: 1,
      updatedAt: 1,
    });
    const err = await rejection(registry.register({ endpoint: address }));
    expect(err.code).toBe('CONFLICT');
    expect(err.message).toContain('elsewhere.example:1');
  });

  it('an unauthorized device is registered as unauthorized, and stays so (not a health failure)', async () => {
    const { sim, registry, events } = await bed(
      { requireAuth: true },
      { healthIntervalMs: 100, quarantineAfterFailures: 2 },
    );
    const record = await registry.register({ endpoint: sim.devices[0]!.address });
    expect(record.state).toBe('unauthorized');
    expect(record.properties).toEqual({});
    // Health passes driven directly: three of them would quarantine (threshold 2) if they counted.
    for (let pass = 0; pass < 3; pass++) await registry.checkHealth();
    expect(await registry.get(record.id)).toMatchObject({ state: 'unauthorized', consecutiveFailures: 0 });
    expect(events.map((e) => e.state)).toEqual(['unauthorized']);
  });

  it('refuses a non-allowed endpoint without any connection attempt', async () => {
    // A listener on another loopback address counts connection attempts.
    let connections = 0;
    const listener: Server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.2', resolve));
    cleanups.push(() => new Promise((resolve) => listener.close(() => resolve())));
    const port = (listener.address() as { port: number }).port;
    const { registry, tunnels } = await bed({}, { policy: new EndpointPolicy({ allow: ['127.0.0.1/32'] }) });

    const err = await rejection(registry.register({ endpoint: `127.0.0.2:${port}` }));
    expect(err.code).toBe('PERMISSION_DENIED');
    expect(err.message).toContain(`127.0.0.2:${port}`);
    expect(err.message).toContain('allowlist: 127.0.0.1/32');
    const defaultPolicy = await bed();
    expect((await rejection(defaultPolicy.registry.register({ endpoint: '10.0.0.1:5555' }))).code).toBe(
      'PERMISSION_DENIED',
    );
    expect((await rejection(registry.register({ endpoint: 'not an endpoint' }))).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      (await rejection(registry.register({ endpoint: '127.0.0.1:1', labels: { 'bad key': 'x' } }))).code,
    ).toBe('INVALID_ARGUMENT');
    // The tunnel manager is the only way to a connection: it never got the endpoint.
    expect(tunnels.list()).toEqual([]);
    expect(connections).toBe(0);
    expect(defaultPolicy.tunnels.list()).toEqual([]);
    expect(await registry.list()).toEqual([]);
  });

  it('remove: refused while leased unless forced; disconnects the tunnel', async () => {
    const leased = new Set<string>();
    const { sim, registry, tunnels, events } = await bed(
      { count: 2 },
      {
        leases: {
          leaseOfDevice: async (id) => (leased.has(id) ? ({ id: `lease-of-${id}` } as Lease) : null),
        },
      },
    );
    const a = await registry.register({ endpoint: sim.devices[0]!.address });
    const b = await registry.register({ endpoint: sim.devices[1]!.address });
    leased.add(a.id);
    const err = await rejection(registry.remove(a.id));
    expect(err.code).toBe('CONFLICT');
    expect(err.message).toContain('leased');
    expect((await registry.get(a.id)).state).toBe('online');

    const removed: string[] = [];
    registry.on('removed', (e: { id: string }) => removed.push(e.id));
    await registry.remove(b.id);
    await registry.remove(a.id, { force: true });
    expect(removed).toEqual([b.id, a.id]);
    expect(await registry.list()).toEqual([]);
    expect(tunnels.list()).toEqual([]);
    expect(await adbState(sim.devices[0]!.address)).toBeUndefined();
    expect((await rejection(registry.remove(a.id))).code).toBe('NOT_FOUND');
    expect(events.filter((e) => e.previous === undefined)).toHaveLength(2);
  });

  it('loadConfigFile registers every entry (source config); errors name the entry index', async () => {
    const { sim, registry, tunnels } = await bed({ count: 2 });
    const tmp = await tempDir('devicebridge-devices-');
    cleanups.push(tmp.cleanup);
    const bad = path.join(tmp.dir, 'bad.json');
    await writeFile(
      bad,
      JSON.stringify([{ endpoint: sim.devices[0]!.address }, { endpoint: '192.168.1.10:5555', labels: {} }]),
    );
    const err = await rejection(registry.loadConfigFile(bad));
    expect(err.code).toBe('PERMISSION_DENIED');
    expect(err.message).toContain('entry 1');
    expect(err.details?.['entry']).toBe(1);
    // Validation happens before any registration.
    expect(tunnels.list()).toEqual([]);

    const unknown = path.join(tmp.dir, 'unknown.json');
    await writeFile(unknown, JSON.stringify([{ endpoint: sim.devices[0]!.address, lables: {} }]));
    expect((await rejection(registry.loadConfigFile(unknown))).message).toMatch(/entry 0: .*lables/);

    // Duplicate and prototype keys are refused by name before anything is registered.
    const dup = path.join(tmp.dir, 'dup.json');
    await writeFile(
      dup,
      `[{"endpoint": "${sim.devices[0]!.address}", "endpoint": "${sim.devices[1]!.address}"}]`,
    );
    const dupErr = await rejection(registry.loadConfigFile(dup));
    expect(dupErr.code).toBe('INVALID_ARGUMENT');
    expect(dupErr.message).toMatch(/duplicate key "endpoint" at line 1, column \d+/);
    const proto = path.join(tmp.dir, 'proto.json');
    await writeFile(
      proto,
      `[{"endpoint": "${sim.devices[0]!.address}", "labels": {"__proto__": {"x": "y"}}}]`,
    );
    expect((await rejection(registry.loadConfigFile(proto))).message).toContain('"__proto__"');
    expect(tunnels.list()).toEqual([]);

    const good = path.join(tmp.dir, 'devices.json');
    await writeFile(
      good,
      JSON.stringify(
        sim.devices.map((d, i) => ({ endpoint: d.address, labels: { slot: String(i) }, provider: 'farm' })),
      ),
    );
    const records = await registry.loadConfigFile(good);
    expect(records.map((r) => [r.source, r.state, r.labels['slot'], r.provider])).toEqual([
      ['config', 'online', '0', 'farm'],
      ['config', 'online', '1', 'farm'],
    ]);
  });

  it('discoverAdbDevices: devices adb sees outside the tunnels become source adb records', async () => {
    const { sim, registry } = await bed({ count: 2 });
    const tunnelled = await registry.register({ endpoint: sim.devices[0]!.address });
    // Connected behind the registry's back (like a USB device the adb server found by itself).
    await client.connect(sim.devices[1]!.address);
    const deadline = Date.now() + 10_000;
    while ((await adbState(sim.devices[1]!.address)) !== 'device' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const added = await registry.discoverAdbDevices();
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      id: sim.devices[1]!.address.replace(':', '-'),
      serial: sim.devices[1]!.address,
      source: 'adb',
      state: 'online',
      properties: { sdk: 34, model: 'DeviceBridge Sim' },
    });
    expect(added[0]!.endpoint).toBeUndefined();
    expect(await registry.discoverAdbDevices()).toEqual([]);
    expect((await registry.list()).map((r) => r.id).sort()).toEqual([tunnelled.id, added[0]!.id].sort());
  });
});

describe('DeviceRegistry: health', () => {
  it('tunnel events: a device that goes offline is offline at once, and online again after reconnect', async () => {
    const { sim, registry, events } = await bed();
    const d = sim.devices[0]!;
    const record = await registry.register({ endpoint: d.address });
    registry.start(); // health interval 60 s: only tunnel events can move the state in this test
    // Offline: every later connection is accepted but never answered.
    d.setFaults({ offlineAfterMs: 0 });
    d.disconnectAll();
    await waitForState(registry, record.id, 'offline', 10_000);
    d.setFaults({});
    await waitForState(registry, record.id, 'online', 15_000);
    const states = events.filter((e) => e.id === record.id).map((e) => e.state);
    expect(states[0]).toBe('online');
    expect(states).toContain('offline');
    expect(states.at(-1)).toBe('online');
  });

  it('a device that stalled is online and leasable again soon after the stall is lifted, not at the next health pass', async () => {
    // No health pass after the one that saw the stall comes within the test (an hour away): only
    // the quick re-checks of an offline device can bring it back.
    const { sim, registry } = await bed({}, { healthIntervalMs: 3_600_000, probeTimeoutMs: 500 });
    const d = sim.devices[0]!;
    const record = await registry.register({ endpoint: d.address });
    registry.start();
    await waitForState(registry, record.id, 'online', 5_000);
    // The link stays up (adb still lists it as `device`) but the device answers nothing.
    d.setFaults({ stall: true });
    await registry.checkHealth();
    expect((await registry.get(record.id)).state).toBe('offline');
    expect((await registry.match({ deviceId: record.id })).available).toEqual([]);

    d.setFaults({});
    await waitForState(registry, record.id, 'online');
    expect((await registry.match({ deviceId: record.id })).available).toEqual([record.id]);
  }, 20_000);

  it('failures of two outages with the device back in between are not consecutive: a passing check ends the run', async () => {
    const { sim, registry } = await bed({}, { healthIntervalMs: 30_000, quarantineAfterFailures: 4 });
    const d = sim.devices[0]!;
    const record = await registry.register({ endpoint: d.address });
    registry.start();
    await waitForState(registry, record.id, 'online', 5_000);
    for (let outage = 0; outage < 2; outage++) {
      d.setFaults({ offlineAfterMs: 0 });
      d.disconnectAll();
      await waitForState(registry, record.id, 'offline', 10_000);
      // Two counted failures (three with the loop's first pass): short of quarantine, not of two outages.
      for (let pass = 0; pass < 2; pass++) await registry.checkHealth();
      expect((await registry.get(record.id)).consecutiveFailures).toBeGreaterThanOrEqual(2);
      expect((await registry.get(record.id)).state).toBe('offline');
      d.setFaults({});
      await waitForState(registry, record.id, 'online', 10_000);
      // Back through its tunnel (no pass for 30 s): a quick check that passes ends the run.
      const deadline = Date.now() + 5_000;
      while ((await registry.get(record.id)).consecutiveFailures > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await registry.get(record.id)).consecutiveFailures, `outage ${outage + 1}`).toBe(0);
    }
    expect((await registry.get(record.id)).state).toBe('online');
  }, 60_000);

  it('repeated health failures quarantine the device with a reason until an admin clears it', async () => {
    const { sim, registry, events } = await bed({}, { healthIntervalMs: 150, quarantineAfterFailures: 3 });
    const d = sim.devices[0]!;
    const record = await registry.register({ endpoint: d.address });
    // Health passes are driven directly (no loop): each one below runs to its end before we look.
    for (let pass = 0; pass < 3; pass++) await registry.checkHealth();
    expect(await registry.get(record.id)).toMatchObject({ state: 'online', consecutiveFailures: 0 }); // healthy passes do not count

    d.setFaults({ offlineAfterMs: 0 });
    d.disconnectAll();
    const until = Date.now() + 15_000;
    while ((await registry.get(record.id)).state !== 'quarantined' && Date.now() < until) {
      await registry.checkHealth();
    }
    const quarantined = await registry.get(record.id);
    expect(quarantined.state).toBe('quarantined');
    expect(quarantined.consecutiveFailures).toBeGreaterThanOrEqual(3);
    expect(quarantined.quarantineReason).toMatch(/^3 consecutive health check failures \(last: /);
    expect(events.find((e) => e.state === 'quarantined')?.reason).toBe(quarantined.quarantineReason);

    // The device recovers, but stays quarantined.
    d.setFaults({});
    const deadline = Date.now() + 15_000;
    while ((await adbState(d.address)) !== 'device' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await adbState(d.address)).toBe('device');
    for (let pass = 0; pass < 3; pass++) await registry.checkHealth();
    expect((await registry.get(record.id)).state).toBe('quarantined');
    expect((await registry.match({})).available).toEqual([]);

    const cleared = await registry.clearQuarantine(record.id);
    expect(cleared.state).toBe('online');
    expect(cleared.quarantineReason).toBeUndefined();
    expect(cleared.consecutiveFailures).toBe(0);
    for (let pass = 0; pass < 3; pass++) await registry.checkHealth();
    expect((await registry.get(record.id)).state).toBe('online');
    expect((await registry.match({})).available).toEqual([record.id]);
  });

  it('a failing probe on a device adb calls online counts as a failure', async () => {
    const { sim, registry } = await bed(
      {},
      { healthIntervalMs: 100, quarantineAfterFailures: 2, probeTimeoutMs: 300 },
    );
    const d = sim.devices[0]!;
    const record = await registry.register({ endpoint: d.address });
    // Every message from the device is delayed beyond the probe deadline; adb still lists it as `device`.
    d.setFaults({ latencyMs: 1000 });
    registry.start();
    const quarantined = await waitForState(registry, record.id, 'quarantined', 15_000);
    expect(quarantined.quarantineReason).toContain('probe "echo ok" failed');
    d.setFaults({});
  });

  it('an unreachable endpoint is registered offline; after a restart the health loop re-connects tunnels', async () => {
    const { sim, registry, store, tunnels } = await bed({}, { connectWaitMs: 500 });
    // Nothing listens on a closed port: registered anyway (tunnels keep retrying), offline.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const dead = await registry.register({ endpoint: `127.0.0.1:${closedPort}` });
    expect(dead.state).toBe('offline');
    expect(dead.properties).toEqual({});
    await registry.remove(dead.id);

    const address = sim.devices[0]!.address;
    const record = await registry.register({ endpoint: address });
    // "Restart": this node's tunnel manager is gone and adb lost the device; the record is in the store.
    tunnels.stop();
    await client.disconnect(address);
    expect(await adbState(address)).toBeUndefined();
    const freshTunnels = new TunnelManager({ client, server, initialBackoffMs: 100, maxBackoffMs: 500 });
    await freshTunnels.start();
    const restarted = new DeviceRegistry({
      store,
      client,
      tunnels: freshTunnels,
      policy: new EndpointPolicy(),
      node: 'node-a',
      healthIntervalMs: 100,
    });
    cleanups.push(async () => {
      await restarted.stop();
      freshTunnels.stop();
    });
    restarted.start();
    const deadline = Date.now() + 10_000;
    while ((await adbState(address)) !== 'device' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(freshTunnels.status(address)?.state).toBe('device');
    await waitForState(restarted, record.id, 'online');
    // The first tick saw it absent (one failure); a healthy pass resets the count.
    await restarted.stop();
    await restarted.checkHealth();
    expect(await restarted.get(record.id)).toMatchObject({ state: 'online', consecutiveFailures: 0 });
  });

  it('shares state through Redis: a second registry (another node) sees it but does not own it', async () => {
    const prefix = `test-${randomUUID()}:`;
    const { sim, registry } = await bed({}, { store: new RedisDeviceStore({ prefix }) });
    const record = await registry.register({ endpoint: sim.devices[0]!.address, labels: { pool: 'ci' } });
    const otherStore = new RedisDeviceStore({ prefix });
    const otherTunnels = new TunnelManager({ client });
    const other = new DeviceRegistry({
      store: otherStore,
      client,
      tunnels: otherTunnels,
      policy: new EndpointPolicy(),
      node: 'node-b',
    });
    cleanups.push(async () => {
      await registry.remove(record.id, { force: true }).catch(() => undefined);
      await otherStore.close();
    });
    expect((await other.get(record.id)).properties.sdk).toBe(34);
    const updated = await other.register({ endpoint: sim.devices[0]!.address, labels: { pool: 'gpu' } });
    expect(updated.ownerNode).toBe('node-a');
    expect(updated.labels).toEqual({ pool: 'gpu' });
    expect(otherTunnels.list()).toEqual([]); // node-b does not connect a device node-a owns
    expect((await other.match({ labels: { pool: 'gpu' } })).available).toEqual([record.id]);
  });

  it('the store lost its data: the owner puts its device back at its next match; another node reports it missing meanwhile', async () => {
    const prefix = `test-${randomUUID()}:`;
    const { sim, registry } = await bed({}, { store: new RedisDeviceStore({ prefix }) });
    const record = await registry.register({ endpoint: sim.devices[0]!.address, labels: { pool: 'ci' } });
    const otherStore = new RedisDeviceStore({ prefix });
    const other = new DeviceRegistry({
      store: otherStore,
      client,
      tunnels: new TunnelManager({ client }),
      policy: new EndpointPolicy(),
      node: 'node-b',
    });
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const loseData = async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    };
    cleanups.push(async () => {
      await registry.remove(record.id, { force: true }).catch(() => undefined);
      await otherStore.close();
      await loseData();
      await redis.quit();
    });
    const selector = { labels: { pool: 'ci' } };
    await registry.checkHealth(); // a running node's health pass: it drives the device
    expect(await other.match(selector)).toEqual({
      matching: [record.id],
      available: [record.id],
      missing: [],
      restoring: false,
    });

    await loseData();
    // Another node: nothing matches, but the device it saw a moment ago is missing (wait, not 404).
    expect(await other.match(selector)).toEqual({
      matching: [],
      available: [],
      missing: [record.id],
      restoring: true,
    });
    expect((await other.match({ labels: { pool: 'gpu' } })).missing).toEqual([]);
    // The owner puts the record back as soon as it matches.
    expect((await registry.match(selector)).matching).toEqual([record.id]);
    expect((await other.match(selector)).missing).toEqual([]);
    expect((await other.match(selector)).matching).toEqual([record.id]);

    // A device removed on purpose is not missing, here or on the other node that had read it.
    await registry.remove(record.id, { force: true });
    expect(await registry.match(selector)).toEqual({
      matching: [],
      available: [],
      missing: [],
      restoring: false,
    });
    expect(await other.match(selector)).toEqual({
      matching: [],
      available: [],
      missing: [],
      restoring: false,
    });
  });

  it('the store lost its data: the owner puts back the baseline of the devices it drives with their records', async () => {
    const prefix = `test-${randomUUID()}:`;
    const store = new RedisDeviceStore({ prefix });
    const { sim, registry } = await bed({}, { store, baselines: { policy: DEFAULT_RESET_POLICY } });
    const record = await registry.register({ endpoint: sim.devices[0]!.address });
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const loseData = async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    };
    cleanups.push(async () => {
      await registry.remove(record.id, { force: true }).catch(() => undefined);
      await loseData();
      await redis.quit();
    });
    expect(record.baseline).toMatchObject({ capturedAt: expect.any(Number) });
    const before = await store.getBaseline(record.id);
    expect(before).not.toBeNull();
    await registry.checkHealth();
    await loseData();
    expect(await store.getBaseline(record.id)).toBeNull();
    await registry.checkHealth();
    expect((await store.get(record.id))?.baseline).toEqual(record.baseline);
    expect(await store.getBaseline(record.id)).toEqual(before);
  });
});
