/**
 * A lease released while its device is briefly offline: the teardown (the glass a11y settings
 * restore from the journal, then the reset to the baseline) cannot reach the device. It is not
 * recorded as failed and the device is not quarantined: the journal stays, the device stays out of
 * the pool, and the teardown runs again once the device is back — restoring the settings once.
 * (Through a whole node: real adb server, a simulated device with a run-time offline fault, the
 * lease HTTP API, Redis leases.)
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GlassA11y, leaseSettingsJournal } from '../../src/helpers/glass/a11y-driver.ts';
import { adbHelperDevice } from '../../src/helpers/snapshot/device.ts';
import { EnsureVerdicts, ensureHelper } from '../../src/helpers/snapshot/ensure-helper.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { type DeviceBridge, fixture, testDeviceBridge, timedRequest } from '../support/bridge.ts';
import { A11Y_FIXTURE_COMPONENT, a11yFixtureManifest } from '../support/device-bed.ts';

let bridge: DeviceBridge;

beforeAll(async () => {
  bridge = await testDeviceBridge({
    simulate: 1,
    redisPrefix: `test:${randomUUID()}:`,
    env: { DEVICEBRIDGE_HEALTH_INTERVAL_MS: '1000' },
  });
}, 120_000);

afterAll(async () => {
  await bridge?.cleanup();
});

const json = (method: string, path: string, body?: unknown) => timedRequest(bridge.app, method, path, body);

/** Poll `read` until `done` holds for its value, or fail after `ms`. */
async function until<T>(
  what: string,
  ms: number,
  read: () => Promise<T>,
  done: (v: T) => boolean,
): Promise<T> {
  const deadline = performance.now() + ms;
  let last: T = await read();
  while (!done(last)) {
    if (performance.now() > deadline)
      throw new Error(`${what}: not within ${ms} ms (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 100));
    last = await read();
  }
  return last;
}

describe('a teardown that meets an offline device', () => {
  it('is run again when the device is back: settings restored, device reset, no quarantine', async () => {
    const [record] = await bridge.node.devices.list();
    const sim = bridge.node.simulator!.devices.find(
      (d) => d.serial === record!.serial || d.address === record!.endpoint,
    )!;
    const android = sim.android as SimAndroidHandle;
    const { client, ledger, locks } = bridge.node.adb;
    const device = adbHelperDevice({ client, serial: record!.serial, ledger, locks });
    await bridge.node.devices.recordBaseline(record!.id);
    const acquired = await json('POST', '/v1/leases', { selector: {}, waitSeconds: 30 });
    expect(acquired.status).toBe(201);
    const lease = acquired.body as { id: string; deviceId: string };
    await ensureHelper(device, a11yFixtureManifest(), new EnsureVerdicts(), {
      apk: async () => fixture('a11y-service.apk'),
    });
    const { a11y } = await GlassA11y.enable({
      device,
      manifest: a11yFixtureManifest(),
      owner: lease.id,
      pollMs: 20,
      journal: leaseSettingsJournal(bridge.node.leases.store, lease.id),
    });
    await a11y.close();
    expect(android.runtime.settings.get('secure', 'enabled_accessibility_services')).toBe(
      A11Y_FIXTURE_COMPONENT,
    );

    // The device goes offline for 3 s; the lease is released meanwhile.
    sim.setFault({ offlineAfterMs: 0 });
    const back = setTimeout(() => sim.clearFault(), 3000);
    try {
      const released = await json('DELETE', `/v1/leases/${lease.id}`);
      expect(released.status).toBe(200);
      // Not leasable while its teardown waits for the device.
      const meanwhile = await json('POST', '/v1/leases', { selector: { deviceId: lease.deviceId } });
      expect(meanwhile.status).toBe(409);
    } finally {
      await until(
        'the fault lifted',
        10_000,
        async () => sim.faults.offlineAfterMs,
        (v) => v === undefined,
      );
      clearTimeout(back);
    }

    const teardown = await until(
      'the teardown recorded',
      60_000,
      () => bridge.node.leases.teardownOf(lease.id),
      (t) => t !== null,
    );
    expect(teardown!.failures).toEqual([]);
    expect(teardown!.actions).toContain(
      `restored secure settings enabled_accessibility_services, accessibility_enabled on ${record!.serial}`,
    );
    expect(teardown!.actions.some((a: string) => a.startsWith('reset: '))).toBe(true);
    expect(teardown!.actions).not.toContain('quarantined device');
    expect(android.runtime.settings.get('secure', 'enabled_accessibility_services') ?? '').toBe('');
    expect(await bridge.node.leases.store.takeDeviceState(lease.id)).toEqual({}); // restored once
    const state = (await bridge.node.devices.get(lease.deviceId)).state;
    expect(state).not.toBe('quarantined');
    // Leasable again.
    const again = await json('POST', '/v1/leases', {
      selector: { deviceId: lease.deviceId },
      waitSeconds: 30,
    });
    expect(again.status).toBe(201);
    await json('DELETE', `/v1/leases/${again.body.id}`);
  }, 120_000);
});
