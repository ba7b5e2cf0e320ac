import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { fnmatchRegExp } from '../../src/simulator/android/commands/find.ts';
import { createSimAndroid, type SimAndroidHandle } from '../../src/simulator/android/index.ts';

async function device(): Promise<SimAndroidHandle> {
  const android = createSimAndroid({ serial: 'find-test', seed: 9 });
  const setup = await runCaptured(
    android,
    'mkdir -p /sdcard/Download/b/c /data/local/tmp/d && echo 1 > /sdcard/Download/b/c/x.txt && echo 2 > /sdcard/Download/a.apk && echo 3 > /data/local/tmp/d/y.bin',
  );
  expect(setup.status).toBe(0);
  return android;
}

describe('find', () => {
  it('walks several start paths pre-order, entries in name order', async () => {
    const run = await runCaptured(await device(), 'find /sdcard/Download /data/local/tmp');
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout).toBe(
      [
        '/sdcard/Download',
        '/sdcard/Download/a.apk',
        '/sdcard/Download/b',
        '/sdcard/Download/b/c',
        '/sdcard/Download/b/c/x.txt',
        '/data/local/tmp',
        '/data/local/tmp/d',
        '/data/local/tmp/d/y.bin',
        '',
      ].join('\n'),
    );
  });

  it('reports unlistable directories and missing paths, goes on, exits 1', async () => {
    const android = await device();
    const run = await runCaptured(android, 'find /sdcard/Android /nope /data/local/tmp/d');
    expect(run.status).toBe(1);
    expect(run.stdout).toBe(
      '/sdcard/Android\n/sdcard/Android/data\n/sdcard/Android/media\n/sdcard/Android/obb\n/data/local/tmp/d\n/data/local/tmp/d/y.bin\n',
    );
    expect(run.stderr).toBe(
      'find: /sdcard/Android/data: Permission denied\nfind: /sdcard/Android/obb: Permission denied\nfind: /nope: No such file or directory\n',
    );
  });

  it('filters by depth, type, name, path, negation, -o and parentheses', async () => {
    const android = await device();
    const out = async (args: string) => (await runCaptured(android, `find ${args}`)).stdout;
    expect(await out('/sdcard -mindepth 1 -maxdepth 1 -type d ! -name Android')).toBe(
      [
        'Alarms',
        'DCIM',
        'Documents',
        'Download',
        'Movies',
        'Music',
        'Notifications',
        'Pictures',
        'Podcasts',
        'Ringtones',
      ]
        .map((d) => `/sdcard/${d}\n`)
        .join(''),
    );
    expect(await out('-H /sdcard/Download -xdev -type f -name "*.txt"')).toBe('/sdcard/Download/b/c/x.txt\n');
    expect(await out('-L /sdcard/Download -not -type d -a -path "*/b/*"')).toBe(
      '/sdcard/Download/b/c/x.txt\n',
    );
    expect(await out('/sdcard/Download \\( -name a.apk -o -name c \\) -print')).toBe(
      '/sdcard/Download/a.apk\n/sdcard/Download/b/c\n',
    );
    expect(await out('/sdcard/Download -type l')).toBe('');
  });

  it('prunes and prints NUL-terminated paths', async () => {
    const run = await runCaptured(
      await device(),
      'find /sdcard /data/local/tmp -path /sdcard/Android -prune -o -type f -print0',
    );
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout).toBe('/sdcard/Download/a.apk\0/sdcard/Download/b/c/x.txt\0/data/local/tmp/d/y.bin\0');
  });

  it('refuses unknown primaries', async () => {
    expect(await runCaptured(await device(), 'find /sdcard -bogus')).toMatchObject({
      status: 1,
      stdout: '',
      stderr: "find: bad arg '-bogus'\n",
    });
  });

  it('fnmatch patterns never throw and match themselves when free of metacharacters (property)', () => {
    fc.assert(
      fc.property(fc.string(), (pattern) => {
        const re = fnmatchRegExp(pattern);
        if (!/[*?[\\]/.test(pattern)) expect(re.test(pattern)).toBe(true);
      }),
    );
  });
});
