/**
 * The ADB layer under faults (issue #15, part A), through the real adb server and the simulator over
 * TCP: every read has a deadline, the server manager is the only one that starts adb, forwards that
 * adb already dropped count as removed, unauthorized devices are retried, stray forwards reconciled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SnapshotDriver } from '../../src/helpers/snapshot/driver.ts';
import { EnsureVerdicts } from '../../src/helpers/snapshot/ensure-helper.ts';
import { DEVICE_FEATURES, deviceBanner } from '../../src/simulator/adbd/connection.ts';
import type { SimulatedDevice } from '../../src/simulator/index.ts';
import { type DeviceBed, fixtureApk, fixtureManifest, startDeviceBed } from '../support/device-bed.ts';

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
    const started = Date.now();
    const outcome = await within(bed.client.shell(d.serial, 'echo ok', { timeoutMs: 2000 }), 10_000);
    expect(outcome, 'shell never answered').not.toBe(NO_ANSWER);
    expect(outcome).toMatchObject({ retryable: true });
    expect(['DEVICE_OFFLINE', 'TIMEOUT']).toContain((outcome as { code: string }).code);
    expect(Date.now() - started).toBeLessThan(2000 + 1000);
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
