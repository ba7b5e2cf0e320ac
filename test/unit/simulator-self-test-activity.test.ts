/**
 * The glass a11y APK's self-test activity on a simulated device: `am start -n` of the declared,
 * exported activity brings an empty, focused EditText to the front (typing reaches it, the a11y
 * tree shows it), `am force-stop` of its package brings back the screen it covered; an activity the
 * package does not declare, or one not exported, is refused as Android refuses the shell uid.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid } from '../../src/simulator/android/index.ts';
import { activeA11yWindow } from '../../src/simulator/glass/ui-tree.ts';

const apk = (): Uint8Array =>
  new Uint8Array(readFileSync(new URL('../fixtures/apk/a11y-service.apk', import.meta.url)));

async function withA11yApk() {
  const android = createSimAndroid({ serial: 'self-test-1', seed: 5 });
  expect(await android.runtime.packages.install(apk(), { allowTest: true })).toMatchObject({ ok: true });
  return android;
}

describe('self-test activity', () => {
  it('am start -n shows a focused empty field that typing fills; force-stop brings the covered screen back', async () => {
    const android = await withA11yApk();
    const covered = android.device.uiXml();
    const started = await runCaptured(android, 'am start -W -n dev.glass.a11y/.SelfTestActivity');
    expect(started).toMatchObject({ status: 0, stderr: '' });
    expect(android.device.uiXml()).not.toBe(covered);
    const window = activeA11yWindow(android.device.uiXml());
    expect(window?.packageName).toBe('dev.glass.a11y');
    const target = android.device.screen.inputTarget();
    expect(target).not.toBeNull();
    expect(android.device.screen.text(target!)).toBe('');

    android.device.screen.type('héllo 日本 😀');
    expect(android.device.screen.text(target!)).toBe('héllo 日本 😀');
    // A second launch is a fresh instance: the field is empty again.
    await runCaptured(android, 'am start -n dev.glass.a11y/.SelfTestActivity');
    expect(android.device.screen.text(android.device.screen.inputTarget()!)).toBe('');

    expect((await runCaptured(android, 'am force-stop dev.glass.a11y')).status).toBe(0);
    expect(android.device.uiXml()).toBe(covered);
  });

  it('an activity the package does not declare does not start', async () => {
    const android = await withA11yApk();
    const covered = android.device.uiXml();
    const r = await runCaptured(android, 'am start -n dev.glass.a11y/.NoSuchActivity');
    expect(r.stderr).toContain(
      'Activity class {dev.glass.a11y/dev.glass.a11y.NoSuchActivity} does not exist',
    );
    expect(android.device.uiXml()).toBe(covered);
  });

  it('an activity that is not exported is refused to the shell uid', async () => {
    const android = await withA11yApk();
    const pkg = android.runtime.packages.get('dev.glass.a11y')!;
    pkg.activities = pkg.activities.map((a) => ({ ...a, exported: false }));
    const covered = android.device.uiXml();
    const r = await runCaptured(android, 'am start -n dev.glass.a11y/.SelfTestActivity');
    expect(r.status).toBe(255);
    expect(r.stderr).toContain('java.lang.SecurityException: Permission Denial');
    expect(r.stderr).toContain('not exported from uid');
    expect(android.device.uiXml()).toBe(covered);
  });
});
