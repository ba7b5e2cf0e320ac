import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid, type SimAndroidHandle } from '../../src/simulator/android/index.ts';

const PLAIN = 'com.devicebridge.fixture.plain';
const apk = new Uint8Array(readFileSync(new URL('../fixtures/apk/plain-app.apk', import.meta.url)));
const devices: SimAndroidHandle[] = [];

afterEach(() => {
  for (const android of devices.splice(0)) android.shutdown();
});

/** What tenant B can see of tenant A through a fresh shell each time. */
async function leftovers(android: SimAndroidHandle) {
  const sh = (line: string) => runCaptured(android, line);
  const ps = (await sh('ps -A -o PID,USER,ARGS')).stdout.split('\n');
  return {
    packages: (await sh('pm list packages -3')).stdout,
    tmpFile: await sh('cat /data/local/tmp/a.txt'),
    sdcardFile: await sh('cat /sdcard/Download/a/note.txt'),
    marker: (await sh('settings get secure some_marker')).stdout,
    sleeper: ps.find((line) => / sleep 600$/.test(line)),
  };
}

describe('what a tenant leaves behind on a device', () => {
  it('persists across shells until tenant B removes it', async () => {
    const android = createSimAndroid({ serial: 'tenants', seed: 21 });
    devices.push(android);
    // Tenant A.
    android.fs.writeFile('/data/local/tmp/a.txt', new TextEncoder().encode('pushed\n'));
    expect(
      (
        await runCaptured(
          android,
          'mkdir -p /sdcard/Download/a && echo written > /sdcard/Download/a/note.txt',
        )
      ).status,
    ).toBe(0);
    expect((await runCaptured(android, `cmd package install -S ${apk.byteLength}`, [apk])).stdout).toBe(
      'Success\n',
    );
    expect((await runCaptured(android, 'settings put secure some_marker 1')).status).toBe(0);
    expect((await runCaptured(android, 'nohup sleep 600 > /dev/null 2>&1 &')).status).toBe(0);

    // Tenant B sees all of it.
    const seen = await leftovers(android);
    expect(seen.packages).toBe(`package:${PLAIN}\n`);
    expect(seen.tmpFile).toMatchObject({ status: 0, stdout: 'pushed\n' });
    expect(seen.sdcardFile).toMatchObject({ status: 0, stdout: 'written\n' });
    expect(seen.marker).toBe('1\n');
    const match = /^ *(\d+) shell {8}sleep 600$/.exec(seen.sleeper ?? '');
    expect(match).not.toBeNull();
    const pid = match?.[1] as string;

    // Tenant B cleans up.
    const cleanup = await runCaptured(
      android,
      `kill -9 ${pid}; pm uninstall ${PLAIN}; rm -rf -- /data/local/tmp/a.txt /sdcard/Download/a; settings delete secure some_marker`,
    );
    expect(cleanup).toMatchObject({ status: 0, stdout: 'Success\nDeleted 1 rows\n', stderr: '' });

    const after = await leftovers(android);
    expect(after.packages).toBe('');
    expect(after.tmpFile).toMatchObject({
      status: 1,
      stderr: 'cat: /data/local/tmp/a.txt: No such file or directory\n',
    });
    expect(after.sdcardFile.status).toBe(1);
    expect(after.marker).toBe('null\n');
    expect(after.sleeper).toBeUndefined();
    expect(android.device.processes()).toEqual([]);
  });
});
