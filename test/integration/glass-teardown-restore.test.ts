/**
 * Teardown restores what the glass a11y service changed: the prior secure settings journaled in the
 * lease store are put back when the lease is released, once, and the teardown record says so.
 * (Through a whole node: real adb server, simulated device, the lease HTTP API, Redis leases.)
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GlassA11y, leaseSettingsJournal } from '../../src/helpers/glass/a11y-driver.ts';
import { adbHelperDevice } from '../../src/helpers/snapshot/device.ts';
import { EnsureVerdicts, ensureHelper } from '../../src/helpers/snapshot/ensure-helper.ts';
import type { AccessibilityServiceManifest } from '../../src/manifest/index.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { type DeviceBridge, fixture, testDeviceBridge, timedRequest } from '../support/bridge.ts';
import { A11Y_FIXTURE_COMPONENT, a11yFixtureManifest } from '../support/device-bed.ts';

const COMPONENT = A11Y_FIXTURE_COMPONENT;
let bridge: DeviceBridge;
let manifest: AccessibilityServiceManifest;

beforeAll(async () => {
  bridge = await testDeviceBridge({ simulate: 1, redisPrefix: `test:${randomUUID()}:` });
  manifest = a11yFixtureManifest();
}, 120_000);

afterAll(async () => {
  await bridge?.cleanup();
});

const json = (method: string, path: string, body?: unknown) => timedRequest(bridge.app, method, path, body);

describe('teardown restores the glass a11y settings', () => {
  it('release puts the prior secure settings back (journaled in the lease store) and records it', async () => {
    const [record] = await bridge.node.devices.list();
    const android = bridge.node.simulator!.devices.find(
      (d) => d.serial === record!.serial || d.address === record!.endpoint,
    )!.android as SimAndroidHandle;
    const { client, ledger, locks } = bridge.node.adb;
    const device = adbHelperDevice({ client, serial: record!.serial, ledger, locks });
    // The farm's own a11y service, enabled before the lease and taken into the device's baseline.
    await device.shell('settings put secure enabled_accessibility_services com.keep/.Me');
    await bridge.node.devices.recordBaseline(record!.id);
    const acquired = await json('POST', '/v1/leases', { selector: {} });
    expect(acquired.status).toBe(201);
    const lease = acquired.body as { id: string; deviceId: string };
    await ensureHelper(device, manifest, new EnsureVerdicts(), {
      apk: async () => fixture('a11y-service.apk'),
    });
    const { a11y } = await GlassA11y.enable({
      device,
      manifest,
      owner: lease.id,
      pollMs: 20,
      journal: leaseSettingsJournal(bridge.node.leases.store, lease.id),
    });
    await a11y.close();
    expect(android.runtime.settings.get('secure', 'enabled_accessibility_services')).toBe(
      `com.keep/.Me:${COMPONENT}`,
    );

    const released = await json('DELETE', `/v1/leases/${lease.id}`);
    expect(released.status).toBe(200);
    expect(released.body['teardown'].failures).toEqual([]);
    expect(released.body['teardown'].actions).toContain(
      `restored secure settings enabled_accessibility_services, accessibility_enabled on ${record!.serial}`,
    );
    expect(android.runtime.settings.get('secure', 'enabled_accessibility_services')).toBe('com.keep/.Me');
    expect(android.runtime.settings.get('secure', 'accessibility_enabled')).toBe('0');
    expect(await bridge.node.leases.store.takeDeviceState(lease.id)).toEqual({}); // restored once
  });
});
