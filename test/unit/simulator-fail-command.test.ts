import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid } from '../../src/simulator/android/index.ts';
import { handleControl } from '../../src/simulator/control.ts';
import { FaultSpecError, parseFaultSpec } from '../../src/simulator/faults.ts';
import type { SimulatedDevice } from '../../src/simulator/simulator.ts';
import type { Faults } from '../../src/simulator/types.ts';

describe('fail-command fault', () => {
  it('parses a command name and refuses anything else', () => {
    expect(parseFaultSpec('fail-command=rm')).toEqual({ failCommand: 'rm' });
    expect(parseFaultSpec('fail-command=app_process')).toEqual({ failCommand: 'app_process' });
    expect(() => parseFaultSpec('fail-command=')).toThrow(FaultSpecError);
    expect(() => parseFaultSpec('fail-command=rm -rf')).toThrow(FaultSpecError);
    expect(() => parseFaultSpec('fail-command=a/b')).toThrow(FaultSpecError);
  });

  it('fails every route to the command while set, and lifts', async () => {
    const faults: Faults = { failCommand: 'rm' };
    const android = createSimAndroid({ serial: 'fail-test', seed: 2, faults });
    android.fs.writeFile('/data/local/tmp/f', new Uint8Array([1]));
    for (const line of [
      'rm -rf -- /data/local/tmp/f',
      'toybox rm /data/local/tmp/f',
      '/system/bin/rm /data/local/tmp/f',
    ]) {
      expect(await runCaptured(android, line)).toMatchObject({
        status: 1,
        stdout: '',
        stderr: 'rm: simulated failure\n',
      });
    }
    expect(android.fs.stat('/data/local/tmp/f')).toBeDefined();
    expect((await runCaptured(android, 'ls /data/local/tmp')).status).toBe(0);
    delete faults.failCommand;
    expect((await runCaptured(android, 'rm /data/local/tmp/f')).status).toBe(0);
  });

  it('fails pm as pm, cmd package and abb_exec, and the other commands by name', async () => {
    const faults: Faults = { failCommand: 'pm' };
    const android = createSimAndroid({ serial: 'fail-test', seed: 2, faults });
    const failure = { status: 1, stdout: '', stderr: 'pm: simulated failure\n' };
    expect(await runCaptured(android, 'pm list packages')).toMatchObject(failure);
    expect(await runCaptured(android, 'cmd package list packages')).toMatchObject(failure);
    expect(await runCaptured(android, ['cmd', 'package', 'install', '-S', '3'], ['abc'])).toMatchObject(
      failure,
    );
    for (const [name, line] of [
      ['settings', 'settings put secure k 1'],
      ['kill', 'kill 99999'],
      ['find', 'find /sdcard'],
    ] as const) {
      faults.failCommand = name;
      expect(await runCaptured(android, line)).toMatchObject({
        status: 1,
        stderr: `${name}: simulated failure\n`,
      });
    }
    expect(android.runtime.settings.get('secure', 'k')).toBeUndefined();
  });

  it('is set and lifted through the control API', () => {
    const faults: Faults = {};
    const device = {
      address: '127.0.0.1:5555',
      serial: '127.0.0.1:5555',
      faults,
      offline: false,
      plugged: true,
      connectionCount: 0,
      setFaults: (next: Faults) => {
        for (const key of Object.keys(faults)) delete faults[key as keyof Faults];
        Object.assign(faults, next);
      },
      setFault: (next: Faults) => Object.assign(faults, next),
      clearFault: (key?: keyof Faults) => {
        if (key === undefined) for (const k of Object.keys(faults)) delete faults[k as keyof Faults];
        else delete faults[key];
      },
      unplug: () => undefined,
      plug: () => undefined,
      disconnectAll: () => undefined,
      listeners: () => [],
      runningHelpers: () => 0,
      processes: () => [],
    } satisfies Partial<SimulatedDevice>;
    const set = handleControl([device], 'PATCH', '/devices/0/faults', '{"faults":["fail-command=settings"]}');
    expect(set.body).toMatchObject({ faults: ['fail-command=settings'] });
    expect(faults.failCommand).toBe('settings');
    handleControl([device], 'DELETE', '/devices/0/faults/fail-command');
    expect(faults.failCommand).toBeUndefined();
  });
});
