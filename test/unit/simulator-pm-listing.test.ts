import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid, type SimAndroidHandle } from '../../src/simulator/android/index.ts';

const apk = (file: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../fixtures/apk/${file}`, import.meta.url)));
const PLAIN = 'com.devicebridge.fixture.plain';
const APK_PATH =
  /^package:(\/data\/app\/~~[A-Za-z0-9_-]{22}==\/([a-z.]+)-[A-Za-z0-9_-]{22}==\/base\.apk)=([a-z.]+) versionCode:(\d+)$/;

const sim = (): SimAndroidHandle =>
  createSimAndroid({
    serial: 'pm-listing',
    seed: 11,
    preinstalled: [{ packageName: 'com.farm.keeper', versionCode: 42, versionName: '4.2' }],
  });

async function thirdParty(android: SimAndroidHandle): Promise<string[]> {
  const run = await runCaptured(android, 'pm list packages -3 -f --show-versioncode');
  expect(run.status).toBe(0);
  return run.stdout.trimEnd().split('\n').filter(Boolean);
}

describe('pm list packages -3 -f --show-versioncode', () => {
  it('lists preinstalled and installed third-party apps with their apk path, never system ones', async () => {
    const android = sim();
    const bytes = apk('plain-app.apk');
    expect((await runCaptured(android, `cmd package install -S ${bytes.byteLength}`, [bytes])).stdout).toBe(
      'Success\n',
    );
    const lines = await thirdParty(android);
    expect(lines).toHaveLength(2);
    const parsed = lines.map((l) => APK_PATH.exec(l));
    expect(parsed.map((m) => [m?.[2], m?.[3], m?.[4]])).toEqual([
      [PLAIN, PLAIN, '7'],
      ['com.farm.keeper', 'com.farm.keeper', '42'],
    ]);
    expect(lines.join('\n')).not.toContain('com.android.settings');
    const system = (await runCaptured(android, 'pm list packages -s')).stdout;
    expect(system).toContain('package:com.android.settings\n');
    expect(system).not.toContain('com.farm.keeper');
    const both = (await runCaptured(android, 'pm list packages')).stdout;
    expect(both).toContain('package:com.android.settings\n');
    expect(both).toContain('package:com.farm.keeper\n');
  });

  it('gives every install a new apk path, by all three install routes', async () => {
    const android = sim();
    const bytes = apk('plain-app.apk');
    android.fs.writeFile('/data/local/tmp/plain.apk', bytes);
    const paths: string[] = [];
    const current = async () => {
      const line = (await thirdParty(android)).find((l) => l.endsWith(`=${PLAIN} versionCode:7`));
      return APK_PATH.exec(line ?? '')?.[1];
    };
    expect((await runCaptured(android, 'pm install -r /data/local/tmp/plain.apk')).stdout).toBe('Success\n');
    paths.push((await current()) as string);
    const abb = await runCaptured(
      android,
      ['cmd', 'package', 'install', '-S', String(bytes.byteLength)],
      [bytes],
    );
    expect(abb.stdout).toBe('Success\n');
    paths.push((await current()) as string);
    expect((await runCaptured(android, `cmd package install -S ${bytes.byteLength}`, [bytes])).stdout).toBe(
      'Success\n',
    );
    paths.push((await current()) as string);
    expect(new Set(paths).size).toBe(3);
    expect(android.fs.stat(paths[0] as string)).toBeUndefined();
    expect(android.fs.stat(paths[2] as string)?.type).toBe('file');
  });

  it('uninstalls with Success, an unknown package with DELETE_FAILED_INTERNAL_ERROR and exit 1', async () => {
    const android = sim();
    expect(await runCaptured(android, 'pm uninstall com.farm.keeper')).toMatchObject({
      status: 0,
      stdout: 'Success\n',
    });
    expect(await thirdParty(android)).toEqual([]);
    expect(await runCaptured(android, 'pm uninstall com.farm.keeper')).toMatchObject({
      status: 1,
      stdout: 'Failure [DELETE_FAILED_INTERNAL_ERROR]\n',
    });
  });
});
