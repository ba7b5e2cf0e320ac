/**
 * The bridge's glass a11y driver against a simulated device through the real adb server: the APK
 * installed by ensure, the prior secure settings journaled BEFORE anything changes, the service
 * enabled next to what was there, ready once it answers a ping (even with no window active), and
 * the settings restored from the journal alone (as another process would after a crash): the prior
 * list put back, or deleted when there was none.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  A11Y_STATE_KEY,
  type A11ySettingsRecord,
  ACCESSIBILITY_ENABLED,
  ENABLED_SERVICES,
  GlassA11y,
  leaseSettingsJournal,
  parseA11ySettingsRecord,
  readSecureSetting,
  withComponent,
  withoutComponent,
} from '../../src/helpers/glass/a11y-driver.ts';
import { EnsureVerdicts, ensureHelper } from '../../src/helpers/snapshot/ensure-helper.ts';
import { RedisLeaseStore } from '../../src/leases/redis-store.ts';
import type { AccessibilityServiceManifest } from '../../src/manifest/index.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { FIXTURES } from '../support/bridge.ts';
import {
  A11Y_FIXTURE_COMPONENT,
  a11yFixtureManifest,
  type DeviceBed,
  startDeviceBed,
} from '../support/device-bed.ts';

const COMPONENT = A11Y_FIXTURE_COMPONENT;
let bed: DeviceBed;
let manifest: AccessibilityServiceManifest;

const android = () => bed.sim.devices[0]!.android as SimAndroidHandle;
const secure = (key: string) => android().runtime.settings.get('secure', key) ?? null;

beforeAll(async () => {
  bed = await startDeviceBed();
  manifest = a11yFixtureManifest();
  const ensured = await ensureHelper(bed.device(), manifest, new EnsureVerdicts(), {
    apk: async () =>
      (await bed.cache.importFile(path.join(FIXTURES, 'a11y-service.apk'), manifest.sha256)).path,
  });
  expect(ensured.action).toBe('installed');
}, 60_000);

afterAll(async () => {
  await bed?.close();
});

describe('the enabled list', () => {
  it('appends the component once and takes it out again, whatever its spelling', () => {
    expect(withComponent(null, COMPONENT)).toBe(COMPONENT);
    expect(withComponent('a.b/.X', COMPONENT)).toBe(`a.b/.X:${COMPONENT}`);
    expect(withComponent(`a.b/.X:dev.glass.a11y/dev.glass.a11y.GlassAccessibilityService`, COMPONENT)).toBe(
      'a.b/.X:dev.glass.a11y/dev.glass.a11y.GlassAccessibilityService',
    );
    expect(withoutComponent(`a.b/.X::${COMPONENT}`, COMPONENT)).toBe('a.b/.X');
  });
});

describe('glass a11y driver', () => {
  it('journals the prior settings first, enables next to them, serves a tree, and restores from the journal', async () => {
    await bed.client.shell(
      bed.sim.devices[0]!.serial,
      'settings put secure enabled_accessibility_services com.other.app/.Reader',
    );
    const journal: A11ySettingsRecord[] = [];
    const seenWhenSaved: Array<string | null> = [];
    const { a11y, prior, attempts } = await GlassA11y.enable({
      device: bed.device(),
      manifest,
      owner: 'lease-a',
      pollMs: 20,
      journal: {
        save: async (record) => {
          seenWhenSaved.push(secure(ENABLED_SERVICES));
          journal.push(record);
        },
      },
    });
    expect(attempts).toBe(1);
    expect(prior).toEqual({
      serial: bed.sim.devices[0]!.serial,
      [ENABLED_SERVICES]: 'com.other.app/.Reader',
      [ACCESSIBILITY_ENABLED]: '0',
    });
    expect(journal).toEqual([prior]);
    expect(seenWhenSaved).toEqual(['com.other.app/.Reader']); // saved before anything changed
    expect(secure(ENABLED_SERVICES)).toBe(`com.other.app/.Reader:${COMPONENT}`);
    expect(secure(ACCESSIBILITY_ENABLED)).toBe('1');
    const tree = await a11y.request('tree', { package: 'any' });
    expect(tree).toMatchObject({ ok: true, tree: { ref: 0 } });
    await a11y.close();

    // Another process restores from the journal alone.
    await GlassA11y.restore(bed.device(), journal[0]!);
    expect(secure(ENABLED_SERVICES)).toBe('com.other.app/.Reader');
    expect(secure(ACCESSIBILITY_ENABLED)).toBe('0');
    await expect
      .poll(() => android().listening(), { timeout: 10_000 })
      .not.toContain('localabstract:glass-a11y');
  });

  it('a setting that did not exist is deleted on restore, not set to ""', async () => {
    await bed.client.shell(
      bed.sim.devices[0]!.serial,
      'settings delete secure enabled_accessibility_services',
    );
    expect(await readSecureSetting(bed.device(), ENABLED_SERVICES)).toBeNull();
    const { a11y, prior } = await GlassA11y.enable({
      device: bed.device(),
      manifest,
      owner: 'lease-b',
      pollMs: 20,
      journal: { save: async () => undefined },
    });
    expect(prior[ENABLED_SERVICES]).toBeNull();
    expect(secure(ENABLED_SERVICES)).toBe(COMPONENT);
    await a11y.close();
    await GlassA11y.restore(bed.device(), prior);
    expect(
      android()
        .runtime.settings.list('secure')
        .map(([k]) => k),
    ).not.toContain(ENABLED_SERVICES);
  });

  it('comes up bound at once while no window is active (screen off, keyguard up)', async () => {
    const device = bed.sim.devices[0]!;
    const before: A11ySettingsRecord = {
      serial: device.serial,
      [ENABLED_SERVICES]: secure(ENABLED_SERVICES),
      [ACCESSIBILITY_ENABLED]: secure(ACCESSIBILITY_ENABLED),
    };
    device.setFault({ noActiveWindow: true });
    try {
      const { a11y, prior, attempts } = await GlassA11y.enable({
        device: bed.device(),
        manifest,
        owner: 'lease-dark',
        pollMs: 20,
        readyTimeoutMs: 2000,
        attempts: 2,
        journal: { save: async () => undefined },
      });
      // Ready in the first attempt: had it waited for a tree that cannot come, that attempt would
      // have run out and a second one started.
      expect(attempts).toBe(1);
      // The service is bound and answers; only the tree is refused while the screen is dark.
      await expect(a11y.request('tree', { package: 'any' })).rejects.toThrow(/no active window/);
      expect(prior).toEqual(before);
      await a11y.close();
    } finally {
      device.clearFault('noActiveWindow');
      await GlassA11y.restore(bed.device(), before);
    }
  });

  it('a journal that cannot save stops before any setting changes', async () => {
    const before = secure(ENABLED_SERVICES);
    const failed = await GlassA11y.enable({
      device: bed.device(),
      manifest,
      owner: 'lease-c',
      journal: {
        save: async () => {
          throw new Error('lease store down');
        },
      },
    }).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(failed).toBe('lease store down');
    expect(secure(ENABLED_SERVICES)).toBe(before);
    expect(secure(ACCESSIBILITY_ENABLED)).toBe('0');
  });

  it('journals into the Redis lease store; a fresh store (another process) takes the record and restores', async () => {
    const serial = bed.sim.devices[0]!.serial;
    await bed.client.shell(serial, 'settings put secure enabled_accessibility_services com.keep/.Me');
    const prefix = `test:${randomUUID()}:`;
    const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
    const writer = new Redis(redisUrl);
    const store = new RedisLeaseStore({ client: writer, prefix });
    const { a11y } = await GlassA11y.enable({
      device: bed.device(),
      manifest,
      owner: 'lease-r',
      pollMs: 20,
      journal: leaseSettingsJournal(store, 'lease-r'),
    });
    expect(secure(ENABLED_SERVICES)).toBe(`com.keep/.Me:${COMPONENT}`);
    await a11y.close();
    writer.disconnect(); // the enabling process is gone

    const reader = new Redis(redisUrl);
    try {
      const later = new RedisLeaseStore({ client: reader, prefix });
      const state = await later.takeDeviceState('lease-r');
      const record = parseA11ySettingsRecord(state[A11Y_STATE_KEY]);
      expect(record).toEqual({ serial, [ENABLED_SERVICES]: 'com.keep/.Me', [ACCESSIBILITY_ENABLED]: '0' });
      await GlassA11y.restore(bed.device(), record!);
      expect(secure(ENABLED_SERVICES)).toBe('com.keep/.Me');
      expect(await later.takeDeviceState('lease-r')).toEqual({}); // taken once
    } finally {
      reader.disconnect();
    }
  });
});
