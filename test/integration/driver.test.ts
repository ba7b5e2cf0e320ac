/**
 * The snapshot-helper driver end to end: the bridge's own adb server (real Debian adb), simulated
 * devices over TCP, fixture APKs through the artifact cache. Nothing mocked.
 */
import { getEventListeners } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BridgeError } from '../../src/errors.ts';
import { BridgeError as BridgeErrorClass } from '../../src/errors.ts';
import { adbHelperDevice } from '../../src/helpers/snapshot/device.ts';
import { SnapshotDriver } from '../../src/helpers/snapshot/driver.ts';
import { EnsureVerdicts } from '../../src/helpers/snapshot/ensure-helper.ts';
import {
  buildDrag,
  buildLongPress,
  buildPinch,
  buildRotate,
  buildSwipe,
  buildTap,
} from '../../src/protocol/helper/touch-plan.ts';
import { normalizeSnapshot } from '../../src/snapshot/normalize.ts';
import { type DeviceBed, fixtureApk, fixtureManifest, startDeviceBed } from '../support/device-bed.ts';

/** A device bed with a driver for `file` whose helper is already ensured. */
async function bedWithDriver(
  file: string,
  options: { owner?: string; sim?: Parameters<typeof startDeviceBed>[0] } = {},
): Promise<{ bed: DeviceBed; driver: SnapshotDriver }> {
  const bed = await startDeviceBed(options.sim);
  const manifest = fixtureManifest(file);
  const driver = new SnapshotDriver(bed.device(), manifest, {
    verdicts: new EnsureVerdicts(),
    apk: fixtureApk(bed.cache, file, manifest),
    ...(options.owner ? { owner: options.owner } : {}),
  });
  await driver.ensure();
  return { bed, driver };
}

describe('ensureHelper through the real adb server', () => {
  let bed: DeviceBed;
  const verdicts = new EnsureVerdicts();
  beforeAll(async () => {
    bed = await startDeviceBed();
  });
  afterAll(async () => bed?.close());

  const driverFor = (file: string) => {
    const manifest = fixtureManifest(file);
    return new SnapshotDriver(bed.device(), manifest, {
      verdicts,
      apk: fixtureApk(bed.cache, file, manifest),
    });
  };

  it('fresh device → installed; second ensure → current with one round trip', async () => {
    const v1 = driverFor('snapshot-helper-v1.apk');
    const first = await v1.ensure();
    expect(first).toMatchObject({ before: 'missing', action: 'installed', installedVersionCode: null });
    const r = await bed.client.shell(
      bed.device().serial,
      'pm list packages --show-versioncode com.callstack.agentdevice.snapshothelper',
    );
    expect(r.stdout.toString()).toContain('versionCode:1');
    const second = await v1.ensure();
    expect(second).toMatchObject({ before: 'current', action: 'none', roundTrips: 1 });
  });

  it('same versionCode with different bytes → mismatched → reinstalled', async () => {
    const rebuilt = driverFor('snapshot-helper-v1-rebuilt.apk');
    const result = await rebuilt.ensure();
    expect(result).toMatchObject({ before: 'mismatched', action: 'reinstalled', installedVersionCode: 1 });
    const again = await driverFor('snapshot-helper-v1-rebuilt.apk').ensure();
    expect(again).toMatchObject({ before: 'current', action: 'none' });
  });

  it('higher versionCode → outdated → updated; different signer → uninstall and retry', async () => {
    expect(await driverFor('snapshot-helper-v2.apk').ensure()).toMatchObject({
      before: 'outdated',
      action: 'updated',
    });
    const keyb = await driverFor('snapshot-helper-v2-keyb.apk').ensure();
    expect(keyb).toMatchObject({ before: 'mismatched', action: 'reinstalled', uninstalledFirst: true });
  });

  it('policy never reports without installing; no uninstall when not allowed', async () => {
    const v1 = fixtureManifest('snapshot-helper-v1.apk');
    const never = await new SnapshotDriver(bed.device(), v1, {
      verdicts,
      apk: fixtureApk(bed.cache, 'snapshot-helper-v1.apk', v1),
    }).ensure('never');
    expect(never).toMatchObject({ before: 'mismatched', action: 'none' });
    // v1 over v2-keyb without -d and without uninstall: a typed install failure, verbatim code kept.
    const { ensureHelper } = await import('../../src/helpers/snapshot/ensure-helper.ts');
    await expect(
      ensureHelper(bed.device(), v1, verdicts, {
        apk: fixtureApk(bed.cache, 'snapshot-helper-v1.apk', v1),
        uninstallOnIncompatible: false,
      }),
    ).rejects.toMatchObject({
      code: 'HELPER_INSTALL_FAILED',
      details: { failureCode: 'INSTALL_FAILED_VERSION_DOWNGRADE' },
    });
  });

  it('install failures from the device map to HELPER_INSTALL_FAILED with the code', async () => {
    bed.sim.devices[0]!.setFaults({ installFailure: 'INSTALL_FAILED_INSUFFICIENT_STORAGE' });
    try {
      const m = fixtureManifest('snapshot-helper-v1.apk');
      await expect(
        new SnapshotDriver(bed.device(), m, {
          verdicts,
          apk: fixtureApk(bed.cache, 'snapshot-helper-v1.apk', m),
        }).ensure('always'),
      ).rejects.toMatchObject({
        code: 'HELPER_INSTALL_FAILED',
        retryable: true,
        details: { failureCode: 'INSTALL_FAILED_INSUFFICIENT_STORAGE' },
      });
    } finally {
      bed.sim.devices[0]!.setFaults({});
    }
  });
});

describe('snapshots, viewport and gestures through both transports', () => {
  let bed: DeviceBed;
  let driver: SnapshotDriver;
  beforeAll(async () => {
    ({ bed, driver } = await bedWithDriver('snapshot-helper-v2.apk', { owner: 'lease-test' }));
  });
  afterAll(async () => {
    await driver?.close();
    await bed?.close();
  });

  it('one-shot and session snapshots of the built-in screen agree', async () => {
    const oneShot = await driver.snapshot({ transport: 'one-shot' });
    expect(oneShot.transport).toBe('one-shot');
    expect(oneShot.xml).toMatch(/^<\?xml[\s\S]*<hierarchy[\s\S]*<\/hierarchy>\s*$/);
    // Reassembled from 2 KiB base64 chunks, the XML is exactly what the device shows.
    expect(oneShot.xml).toBe(bed.sim.devices[0]!.android.device.uiXml());
    const session = await driver.snapshot({ transport: 'session' });
    expect(session.transport).toBe('session');
    expect(session.xml).toBe(oneShot.xml);
    expect(session.result.nodeCount).toBe(oneShot.result.nodeCount);
    const tree = normalizeSnapshot(session.xml);
    expect(tree.nodeCount ?? tree.nodes?.length).toBeGreaterThan(10);
    // The session is reused and the forward is in the ledger.
    expect(driver.sessionAlive).toBe(true);
    expect(bed.ledger.entries('lease-test')).toHaveLength(1);
    const auto = await driver.snapshot();
    expect(auto.transport).toBe('session');
  });

  it('a request ends with its caller’s abort reason, and leaves no listener on the caller’s long-lived signal', async () => {
    const lease = new AbortController(); // a lease's signal: lives across many requests
    await driver.snapshot({ transport: 'session', signal: lease.signal });
    const before = getEventListeners(lease.signal, 'abort').length;
    for (let i = 0; i < 5; i++) await driver.viewport({ transport: 'session', signal: lease.signal });
    await driver.viewport({ transport: 'one-shot', signal: lease.signal }).catch(() => undefined);
    expect(getEventListeners(lease.signal, 'abort').length).toBe(before);
    const reason = new BridgeErrorClass('LEASE_EXPIRED', 'lease ended');
    const pending = driver.snapshot({ transport: 'session', signal: lease.signal });
    lease.abort(reason);
    await expect(pending).rejects.toMatchObject({ code: 'LEASE_EXPIRED' });
    const gone = await driver
      .viewport({ transport: 'session', signal: lease.signal })
      .catch((e: unknown) => e);
    expect(gone).toMatchObject({ code: 'LEASE_EXPIRED' });
  });

  it('viewport on both paths', async () => {
    const a = await driver.viewport({ transport: 'one-shot' });
    const b = await driver.viewport({ transport: 'session' });
    expect(a.viewport).toEqual(b.viewport);
    expect(a.viewport.width).toBeGreaterThan(0);
  });

  it('every gesture kind is injected, through session and one-shot', async () => {
    const android = bed.sim.devices[0]!.android as unknown as { inputEvents(): unknown[] };
    const before = android.inputEvents().length;
    const plans = [
      buildTap(100, 200),
      buildLongPress(100, 200),
      buildSwipe({ x: 500, y: 1500 }, { x: 500, y: 500 }, 300),
      buildDrag({ x: 100, y: 100 }, { x: 600, y: 900 }, 400),
      buildPinch({ x: 540, y: 1200 }, 400, 100, 300),
      buildRotate({ x: 540, y: 1200 }, 200, 0, 90, 300),
    ];
    for (const plan of plans) {
      const s = await driver.gesture(plan, { transport: 'session' });
      expect(s.result.injectedEvents).toBeGreaterThan(0);
      const o = await driver.gesture(plan, { transport: 'one-shot' });
      expect(o.result.kind).toBe(plan.kind);
    }
    expect(android.inputEvents().length - before).toBe(plans.length * 2);
    await expect(driver.gesture({ kind: 'swipe', durationMs: 10, pointers: [] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('changed capture options restart the session; closing leaves no forward behind', async () => {
    const small = await driver.snapshot({ transport: 'session', capture: { maxNodes: 5 } });
    expect(small.result.truncated).toBe(true);
    expect(small.result.nodeCount).toBeLessThanOrEqual(5);
    expect(bed.ledger.entries('lease-test')).toHaveLength(1);
    await driver.close();
    expect(driver.sessionAlive).toBe(false);
    expect(await bed.client.listForwards()).toEqual([]);
    expect(bed.ledger.entries()).toEqual([]);
  });
});

describe('faults map to typed errors and leave the device usable', () => {
  let bed: DeviceBed;
  let driver: SnapshotDriver;
  beforeAll(async () => {
    ({ bed, driver } = await bedWithDriver('snapshot-helper-v1.apk'));
  });
  afterAll(async () => {
    await driver?.close();
    await bed?.close();
  });

  const sim = () => bed.sim.devices[0]!;
  // Each test sets the faults it needs; none leaks into the next one when a test fails midway.
  afterEach(() => sim().setFaults({}));

  it('helper crash → HELPER_FAILED (retryable), then a clean snapshot', async () => {
    sim().setFaults({ helperCrash: true });
    await expect(driver.snapshot({ transport: 'one-shot' })).rejects.toMatchObject({
      code: 'HELPER_FAILED',
      retryable: true,
    });
    sim().setFaults({});
    expect((await driver.snapshot({ transport: 'one-shot' })).xml).toContain('</hierarchy>');
  });

  it('corrupted, dropped and duplicated chunks → HELPER_PROTOCOL_ERROR naming the problem', async () => {
    for (const action of ['corrupt', 'drop', 'duplicate'] as const) {
      sim().setFaults({ chunk: { action, index: 1 } });
      const err = await driver.snapshot({ transport: 'one-shot' }).catch((e: unknown) => e);
      expect(err, action).toMatchObject({ code: 'HELPER_PROTOCOL_ERROR' });
    }
    sim().setFaults({});
    expect((await driver.snapshot({ transport: 'one-shot' })).xml).toContain('</hierarchy>');
  });

  it('helper timeout → TIMEOUT after the command deadline, helper force-stopped', async () => {
    sim().setFaults({ helperTimeout: true });
    const started = Date.now();
    await expect(
      driver.snapshot({ transport: 'one-shot', capture: { timeoutMs: 200 } }),
    ).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(20_000);
    sim().setFaults({});
    expect((await driver.snapshot({ transport: 'one-shot' })).xml).toContain('</hierarchy>');
  });

  it('auto falls back to one-shot when the session cannot start, and starts a session once it can', async () => {
    sim().setFaults({ helperCrash: true });
    const err = await driver.snapshot({ transport: 'session' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'HELPER_FAILED' });
    expect((err as BridgeError).details?.['attempts']).toEqual([
      expect.objectContaining({ transport: 'session', outcome: 'HELPER_FAILED' }),
    ]);
    // The crash hits one-shot too, so auto fails, but only after trying one-shot as its fallback.
    const autoErr = await driver.snapshot({ transport: 'auto' }).catch((e: unknown) => e);
    expect(autoErr).toMatchObject({ code: 'HELPER_FAILED' });
    expect((autoErr as BridgeError).details?.['attempts']).toEqual([
      expect.objectContaining({ transport: 'session', outcome: 'HELPER_FAILED' }),
      expect.objectContaining({ transport: 'one-shot', outcome: 'HELPER_FAILED' }),
    ]);
    sim().setFaults({});
    const auto = await driver.snapshot({ transport: 'auto' });
    expect(auto.transport).toBe('session');
    expect(auto.fallback).toBeUndefined();
    expect(auto.xml).toContain('</hierarchy>');
  });

  it('auto falls back to one-shot when a running session dies, and says why', async () => {
    const first = await driver.snapshot({ transport: 'auto' });
    expect(first.transport).toBe('session');
    // Something else force-stops the helper: the session's listener is gone.
    await bed.client.shell(sim().serial, 'am force-stop com.callstack.agentdevice.snapshothelper');
    const fallback = await driver.snapshot({ transport: 'auto' });
    expect(fallback.transport).toBe('one-shot');
    expect(fallback.fallback).toMatch(/closed the connection|not running|ended/);
    expect(fallback.xml).toContain('</hierarchy>');
    // The next auto call starts a fresh session.
    expect((await driver.snapshot({ transport: 'auto' })).transport).toBe('session');
    await driver.close();
  });

  it('adb server killed mid-run → restarted, tunnel reconnected, device usable', async () => {
    const pid = bed.server.pid!;
    const restarted = new Promise((r) => bed.server.once('restarted', r));
    process.kill(pid, 'SIGKILL');
    await restarted;
    expect(bed.server.restarts).toBeGreaterThanOrEqual(1);
    expect(await bed.tunnels.waitFor(sim().address, 'device', 15_000)).toBe(true);
    expect((await driver.snapshot({ transport: 'one-shot' })).xml).toContain('</hierarchy>');
  });
});

describe('a 5,000-node tree', () => {
  let bed: DeviceBed;
  let driver: SnapshotDriver;
  beforeAll(async () => {
    ({ bed, driver } = await bedWithDriver('snapshot-helper-v1.apk', { sim: { nodes: 5000 } }));
  });
  afterAll(async () => {
    await driver?.close();
    await bed?.close();
  });

  it('arrives whole through one-shot and session', async () => {
    const a = await driver.snapshot({ transport: 'one-shot', capture: { maxNodes: 10000 } });
    const b = await driver.snapshot({ transport: 'session', capture: { maxNodes: 10000 } });
    expect(a.xml).toBe(b.xml);
    expect(a.xml.match(/<node /g)?.length).toBe(5000);
    expect(a.result.truncated).toBe(false);
  });
});

describe('connection faults and the forward ledger', () => {
  let bed: DeviceBed;
  let driver: SnapshotDriver;
  beforeAll(async () => {
    ({ bed, driver } = await bedWithDriver('snapshot-helper-v1.apk', { owner: 'lease-faults' }));
  });
  afterAll(async () => {
    await driver?.close();
    await bed?.close();
  });
  const sim = () => bed.sim.devices[0]!;
  // Each test sets the faults it needs; none leaks into the next one when a test fails midway.
  afterEach(() => sim().setFaults({}));
  // What happened when, for the failure message of a test that waits on a real link.
  let trace: string[] = [];
  let t0 = 0;
  const step = (what: string) =>
    trace.push(`${Date.now() - t0}ms ${what} [tunnel ${bed.tunnels.status(sim().address)?.state}]`);
  beforeEach(() => {
    trace = [];
    t0 = Date.now();
  });

  /** Wait until the bridge sees the device leave `device`; pull the cable again if adb raced back in. */
  async function leftDeviceState(timeoutMs = 15_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    let kicked = Date.now();
    while (Date.now() < until) {
      const state = bed.tunnels.status(sim().address)?.state ?? 'absent';
      if (state !== 'device') return state;
      if (Date.now() - kicked > 2000) {
        sim().disconnectAll();
        kicked = Date.now();
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return 'device';
  }

  // A link that keeps failing can make each step wait out its full deadline (a one-shot's command
  // deadline, then the force-stop's), so these tests get two minutes.
  async function usableAgain(): Promise<void> {
    sim().setFaults({});
    step('fault lifted');
    // Ready means a real round trip works, not only that adb lists it.
    const until = Date.now() + 40_000;
    let ok = false;
    while (!ok && Date.now() < until) {
      ok = await bed.client.shell(sim().serial, 'echo ok', { timeoutMs: 2000 }).then(
        (r) => r.stdout.toString() === 'ok\n',
        (e: Error) => {
          step(`probe: ${e.message.slice(0, 80)}`);
          return false;
        },
      );
      if (!ok) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ok, trace.join('\n')).toBe(true);
    step('probe ok');
    expect((await driver.snapshot({ transport: 'one-shot' })).xml).toContain('</hierarchy>');
  }

  it('a device that goes offline → DEVICE_OFFLINE (retryable); usable once it is back', async () => {
    // The fault counts from the next handshake: drop the link so adb reconnects into it.
    sim().setFaults({ offlineAfterMs: 1 });
    sim().disconnectAll();
    expect(await leftDeviceState()).not.toBe('device');
    step('left device state');
    const err = await driver
      .snapshot({ transport: 'one-shot', capture: { timeoutMs: 500 } })
      .catch((e: unknown) => e);
    step(`snapshot failed: ${(err as Error).message?.slice(0, 80)}`);
    expect(err).toMatchObject({ retryable: true });
    expect(['DEVICE_OFFLINE', 'TIMEOUT']).toContain((err as { code: string }).code);
    await usableAgain();
  }, 120_000);

  it('a connection dropped mid-transfer → a retryable typed error; usable after reconnect', async () => {
    sim().setFaults({ dropAfterBytes: 4000 });
    sim().disconnectAll();
    const err = await driver
      .snapshot({ transport: 'one-shot', capture: { timeoutMs: 500 } })
      .catch((e: unknown) => e);
    step(`snapshot failed: ${(err as Error).message?.slice(0, 80)}`);
    expect(err).toMatchObject({ retryable: true });
    await usableAgain();
  }, 120_000);

  it('an unauthorized device → UNAUTHORIZED_DEVICE', async () => {
    const { startSimulator } = await import('../../src/simulator/index.ts');
    const locked = await startSimulator({ port: 0, count: 1, requireAuth: true });
    try {
      const address = locked.devices[0]!.address;
      await bed.tunnels.add(address);
      expect(await bed.tunnels.waitFor(address, 'unauthorized', 10_000)).toBe(true);
      const manifest = fixtureManifest('snapshot-helper-v1.apk');
      const device = adbHelperDevice({
        client: bed.client,
        serial: address,
        ledger: bed.ledger,
        locks: bed.locks,
      });
      const other = new SnapshotDriver(device, manifest, {
        verdicts: new EnsureVerdicts(),
        apk: fixtureApk(bed.cache, 'snapshot-helper-v1.apk', manifest),
      });
      await expect(other.ensure()).rejects.toMatchObject({ code: 'UNAUTHORIZED_DEVICE', retryable: true });
      await bed.tunnels.remove(address);
    } finally {
      await locked.close();
    }
  });

  it('reconcile removes stray forwards on the bridge-owned adb server', async () => {
    const serial = sim().serial;
    const stray = await bed.client.forward(serial, 'tcp:0', 'tcp:9999');
    const owned = await bed.ledger.open('lease-faults', serial, 'tcp:0', 'tcp:9998');
    const result = await bed.ledger.reconcile();
    expect(result.removedStrays).toEqual([`${serial} ${stray} tcp:9999`]);
    const left = await bed.client.listForwards();
    expect(left.map((f) => f.local)).toEqual([owned.local]);
    const released = await bed.ledger.release('lease-faults');
    expect(released.removed).toHaveLength(1);
    expect(await bed.client.listForwards()).toEqual([]);
  });
});
