/**
 * A lease's glass companions on the node's LeaseRoom, against a simulated device through the
 * real adb server (leases in the memory store, releases in a filesystem store): an a11y service
 * that never binds is COMPANION_UNSUPPORTED, and the settings the failed enable changed are
 * restored by teardown; a release of the wrong kind is COMPANION_UNSUPPORTED naming the kind.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Attempt, AttemptSchema } from '../../src/api/index.ts';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import type { BridgeError } from '../../src/errors.ts';
import { LeaseRoom, type LeaseTarget } from '../../src/lease-session/index.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import { RedisLeaseStore } from '../../src/leases/redis-store.ts';
import { publishRelease } from '../../src/releases/publish.ts';
import { ReleaseRepository } from '../../src/releases/repository.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { fixture, tempDir } from '../support/bridge.ts';
import { type DeviceBed, startDeviceBed } from '../support/device-bed.ts';

let bed: DeviceBed;
let tmp: { dir: string; cleanup(): Promise<void> };
let store: FsArtifactStore;
let leases: MemoryLeaseStore;
let room: LeaseRoom;

beforeAll(async () => {
  bed = await startDeviceBed();
  tmp = await tempDir();
  store = new FsArtifactStore(path.join(tmp.dir, 'artifacts'));
  leases = new MemoryLeaseStore();
  room = new LeaseRoom({
    adb: { client: bed.client, ledger: bed.ledger, locks: bed.locks },
    releases: new ReleaseRepository(store),
    store,
    cache: bed.cache,
    fence: leases,
    journal: leases,
    glass: { a11yReadyTimeoutMs: 300 },
  });
}, 60_000);

afterAll(async () => {
  await room?.close();
  await store?.close();
  await bed?.close();
  await tmp?.cleanup();
});

const android = () => bed.sim.devices[0]!.android as SimAndroidHandle;

let leased = 0;

/** A lease in the store (a device id of its own: the fence is all the operations read of it). */
async function lease(): Promise<LeaseTarget> {
  const deviceId = `device-${leased++}`;
  const got = await leases.acquire({
    candidates: [deviceId],
    tenant: 't',
    holder: 'h',
    ttlSeconds: 60,
    selector: {},
  });
  if (got === null) throw new Error('no lease');
  return { id: got.id, deviceId, fencingToken: got.fencingToken, serial: bed.sim.devices[0]!.serial };
}

async function end(target: LeaseTarget) {
  const teardown = await room.closeLease(target.id);
  await leases.release(target.id);
  return teardown;
}

describe('glass companions on LeaseRoom', () => {
  it('an a11y service that never binds is COMPANION_UNSUPPORTED; teardown restores what enabling changed', async () => {
    // A release whose socket the service never listens on: it never answers.
    await publishRelease(store, {
      apkPath: fixture('a11y-service.apk'),
      name: 'glass-a11y',
      version: '0.1.0',
      kind: 'accessibility-service-apk',
      socketName: 'glass-a11y-elsewhere',
    });
    const before = android().runtime.settings.get('secure', 'enabled_accessibility_services') ?? null;
    const target = await lease();
    const err = await room.glass.a11yTree(target, '').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'COMPANION_UNSUPPORTED', retryable: false });
    expect((err as Error).message).toContain('cannot run the glass companion glass-a11y');
    expect((err as Error).message).toContain('did not come up');
    // What it tried, in the one shape every error's `details.attempts` has (helpers' too).
    const attempts = (err as BridgeError).details?.['attempts'];
    expect(AttemptSchema.array().safeParse(attempts).success, JSON.stringify(attempts)).toBe(true);
    expect(attempts).toHaveLength(3);
    for (const attempt of attempts as Attempt[]) {
      expect(attempt).toMatchObject({ transport: 'glass-a11y', outcome: 'UNAVAILABLE' });
    }
    const teardown = await end(target);
    expect(teardown.failures).toEqual([]);
    expect(teardown.actions).toContain(
      `restored secure settings enabled_accessibility_services, accessibility_enabled on ${target.serial}`,
    );
    expect(android().runtime.settings.get('secure', 'enabled_accessibility_services') ?? null).toBe(before);
    expect(bed.ledger.entries(target.id)).toEqual([]);
  });

  it('a companion published as another kind is COMPANION_UNSUPPORTED naming the kind', async () => {
    await publishRelease(store, {
      apkPath: fixture('a11y-service.apk'),
      name: 'glass-agent',
      version: '0.1.0',
      kind: 'accessibility-service-apk',
      socketName: 'glass-agent',
    });
    const target = await lease();
    const err = await room.glass.agent(target, 'ping').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'COMPANION_UNSUPPORTED' });
    expect((err as Error).message).toContain(
      'is a accessibility-service-apk release, not an app-process-jar',
    );
    expect((await end(target)).failures).toEqual([]);
  });

  it('a store that does not answer while enabling is UNAVAILABLE (retryable), not COMPANION_UNSUPPORTED', async () => {
    // Any a11y release will do (the journal is written before the service is enabled).
    if ((await new ReleaseRepository(store).getLatestRelease('glass-a11y')) === null) {
      await publishRelease(store, {
        apkPath: fixture('a11y-service.apk'),
        name: 'glass-a11y',
        version: '0.1.0',
        kind: 'accessibility-service-apk',
        socketName: 'glass-a11y',
      });
    }
    // The journal is Redis on a loopback port nothing listens on: a Redis outage, not the device.
    const down = new RedisLeaseStore({ url: 'redis://127.0.0.1:1', prefix: `test-${randomUUID()}:` });
    const blip = new LeaseRoom({
      adb: { client: bed.client, ledger: bed.ledger, locks: bed.locks },
      releases: new ReleaseRepository(store),
      store,
      cache: bed.cache,
      fence: leases,
      journal: down,
      glass: { a11yReadyTimeoutMs: 300 },
    });
    try {
      const target = await lease();
      const err = await blip.glass.a11yTree(target, '').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'UNAVAILABLE', retryable: true, details: { dependency: 'redis' } });
      expect((err as Error).message).not.toContain('cannot run the glass companion');
      await blip.closeLease(target.id);
      await leases.release(target.id);
    } finally {
      await blip.close();
      await down.close();
    }
  });
});
