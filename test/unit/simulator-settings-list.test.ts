import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { listLines } from '../../src/simulator/android/commands/settings.ts';
import { createSimAndroid } from '../../src/simulator/android/index.ts';

describe('settings list', () => {
  it('sorts whole key=value lines, as SettingsService does', () => {
    expect(
      listLines([
        ['a', '2'],
        ['a.b', '1'],
        ['a_c', '3'],
        ['n', null],
      ]),
    ).toBe('a.b=1\na=2\na_c=3\nn=null\n');
  });

  it('keeps new keys across shells and lists them in order in every namespace', async () => {
    const android = createSimAndroid({ serial: 'settings-list', seed: 1 });
    for (const ns of ['global', 'secure', 'system']) {
      expect((await runCaptured(android, `settings put ${ns} zz.marker 1`)).status).toBe(0);
      expect((await runCaptured(android, `settings put ${ns} zz 2`)).status).toBe(0);
      const lines = (await runCaptured(android, `settings list ${ns}`)).stdout.trimEnd().split('\n');
      expect(lines).toEqual([...lines].sort());
      expect(lines.slice(-2)).toEqual(['zz.marker=1', 'zz=2']);
      expect(await runCaptured(android, `settings delete ${ns} zz.marker`)).toMatchObject({
        status: 0,
        stdout: 'Deleted 1 rows\n',
      });
      expect((await runCaptured(android, `settings delete ${ns} zz.marker`)).stdout).toBe('Deleted 0 rows\n');
    }
  });
});

describe('wake, home and keyguard', () => {
  it('succeed silently and are recorded as input', async () => {
    const android = createSimAndroid({ serial: 'wake', seed: 1 });
    for (const line of [
      'input keyevent KEYCODE_WAKEUP',
      'input keyevent 224',
      'input keyevent KEYCODE_HOME',
      'input keyevent 3',
      'wm dismiss-keyguard',
    ]) {
      expect(await runCaptured(android, line)).toMatchObject({ status: 0, stdout: '', stderr: '' });
    }
    expect(android.inputEvents()).toEqual([
      expect.objectContaining({ type: 'keyevent', keyCode: 224 }),
      expect.objectContaining({ type: 'keyevent', keyCode: 224 }),
      expect.objectContaining({ type: 'keyevent', keyCode: 3 }),
      expect.objectContaining({ type: 'keyevent', keyCode: 3 }),
      { type: 'dismiss-keyguard' },
    ]);
  });
});
