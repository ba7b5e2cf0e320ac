import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid } from '../../src/simulator/android/index.ts';

const sim = () => createSimAndroid({ serial: 'storage-test', seed: 4 });

describe('shared storage and scratch space', () => {
  it('has a fresh device folders on /sdcard; Android/data cannot be listed', async () => {
    const android = sim();
    expect((await runCaptured(android, 'ls /sdcard')).stdout).toBe(
      'Alarms\nAndroid\nDCIM\nDocuments\nDownload\nMovies\nMusic\nNotifications\nPictures\nPodcasts\nRingtones\n',
    );
    expect(await runCaptured(android, 'ls /sdcard/Android/data')).toMatchObject({
      status: 1,
      stderr: 'ls: /sdcard/Android/data: Permission denied\n',
    });
  });

  it('keeps pushed and redirected files across shells until removed', async () => {
    const android = sim();
    android.fs.writeFile('/data/local/tmp/pushed.bin', new Uint8Array([1, 2, 3]));
    await runCaptured(android, 'mkdir -p /sdcard/Download/t/u && echo note > /sdcard/Download/t/u/n.txt');
    expect((await runCaptured(android, 'cat /sdcard/Download/t/u/n.txt')).stdout).toBe('note\n');
    expect(android.fs.readFile('/data/local/tmp/pushed.bin')).toEqual(new Uint8Array([1, 2, 3]));
    const rm = await runCaptured(
      android,
      'rm -rf -- /data/local/tmp/pushed.bin /sdcard/Download/t /sdcard/none',
    );
    expect(rm).toMatchObject({ status: 0, stderr: '' });
    expect(android.fs.stat('/data/local/tmp/pushed.bin')).toBeUndefined();
    expect(android.fs.stat('/sdcard/Download/t')).toBeUndefined();
  });

  it('rm -- takes operands that look like options', async () => {
    const android = sim();
    await runCaptured(android, 'cd /data/local/tmp && echo x > ./-f');
    expect(await runCaptured(android, 'cd /data/local/tmp && rm -- -f && ls')).toMatchObject({
      status: 0,
      stdout: '',
    });
  });

  it('rmdir removes empty directories, several per call, -p the emptied parents', async () => {
    const android = sim();
    await runCaptured(
      android,
      'mkdir -p /data/local/tmp/a/b /data/local/tmp/c /sdcard/Music/full && touch /sdcard/Music/full/f',
    );
    expect(
      await runCaptured(android, 'rmdir /data/local/tmp/c /sdcard/Music/full /data/local/tmp/none'),
    ).toMatchObject({
      status: 1,
      stderr:
        'rmdir: /sdcard/Music/full: Directory not empty\nrmdir: /data/local/tmp/none: No such file or directory\n',
    });
    expect(android.fs.stat('/data/local/tmp/c')).toBeUndefined();
    expect(await runCaptured(android, 'cd /data/local/tmp && rmdir -p a/b')).toMatchObject({ status: 0 });
    expect(android.fs.stat('/data/local/tmp/a')).toBeUndefined();
    expect(android.fs.stat('/data/local/tmp')?.type).toBe('dir');
  });
});
