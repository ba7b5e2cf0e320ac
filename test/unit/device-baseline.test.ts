/**
 * The baseline's pure rules: the reading script's output parsed section by section (a device cannot
 * forge a section: the marker is random), the difference from the baseline, the batched reset
 * scripts and their per-item outcomes.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DeviceReading,
  decidePackages,
  describeDiff,
  diffReading,
  isClean,
  parseItemOutcomes,
  parsePackageList,
  parsePathList,
  parseProcesses,
  parseReading,
  parseSettingsList,
  READING_SECTIONS,
  readingMarker,
  readingScript,
  removeScript,
  settingsScript,
} from '../../src/devices/baseline.ts';
import {
  DEFAULT_RESET_POLICY,
  parseResetPolicy,
  readResetPolicyFile,
} from '../../src/devices/reset-policy.ts';

const MARKER = readingMarker(() => '0123456789abcdef0123');

function output(parts: Record<string, string | Buffer>): Buffer {
  return Buffer.concat(
    READING_SECTIONS.map((name) =>
      Buffer.concat([Buffer.from(`\n${MARKER}:${name}\n`), Buffer.from(parts[name] ?? '')]),
    ),
  );
}

const TOYBOX_PS = [
  '  PID  PPID USER     ARGS',
  '    1     0 root     /init',
  '  610     1 shell    /system/bin/adbd --root_seclabel=u:r:su:s0',
  ' 4200     1 shell    sleep 600',
  ' 4300   610 shell    /system/bin/sh -c echo',
  ' 4301  4300 shell    ps -A -o PID,PPID,USER,ARGS',
  ' 5000   600 u0_a55   com.example.app',
].join('\n');

function reading(patch: Partial<DeviceReading> = {}): DeviceReading {
  return {
    packages: { 'com.farm.app': { path: '/data/app/~~a==/com.farm.app-b==/base.apk', versionCode: 7 } },
    dirs: ['/data/local/tmp/farm', '/sdcard/Download'],
    files: ['/data/local/tmp/farm/config', '/sdcard/Download/readme.txt'],
    settings: {
      global: { adb_enabled: '1' },
      secure: { accessibility_enabled: '0' },
      system: { font_scale: '1.0' },
    },
    processes: [{ pid: 610, args: '/system/bin/adbd' }],
    ...patch,
  };
}

describe('device reading', () => {
  it('parses every section of the reading script', () => {
    const out = output({
      packages:
        'package:/data/app/~~x==/com.a-y==/base.apk=com.a versionCode:12\npackage:/data/app/com.b-1/base.apk=com.b\n',
      'settings-global': 'adb_enabled=1\nweird=a=b\nempty=\n',
      'settings-secure': 'android_id=abc\n',
      'settings-system': '',
      dirs: '/sdcard/Download\0/sdcard/Android\0/sdcard/Android/data\0',
      files: '/data/local/tmp/a b\0/sdcard/Download/x\ny\0',
      self: '4300\n',
      processes: `${TOYBOX_PS}\n`,
    });
    const r = parseReading(out, MARKER, DEFAULT_RESET_POLICY);
    expect(r.packages).toEqual({
      'com.a': { path: '/data/app/~~x==/com.a-y==/base.apk', versionCode: 12 },
      'com.b': { path: '/data/app/com.b-1/base.apk', versionCode: null },
    });
    expect(r.settings.global).toEqual({ adb_enabled: '1', weird: 'a=b', empty: '' });
    expect(r.dirs).toEqual(['/sdcard/Download']); // /sdcard/Android is left alone by default
    expect(r.files).toEqual(['/data/local/tmp/a b', '/sdcard/Download/x\ny']);
    // Only the shell user's processes, without the reading's own shell and its child.
    expect(r.processes).toEqual([
      { pid: 610, args: '/system/bin/adbd --root_seclabel=u:r:su:s0' },
      { pid: 4200, args: 'sleep 600' },
    ]);
  });

  it('refuses a reading cut short, and a section forged without the random marker', () => {
    const full = output({ self: '1\n', processes: 'PID PPID USER ARGS\n' });
    expect(() => parseReading(full.subarray(0, full.length - 30), MARKER, DEFAULT_RESET_POLICY)).toThrow(
      /no end section/,
    );
    const forged = Buffer.from('\n@@devicebridge-ffffffffffffffff:end\n');
    expect(() => parseReading(forged, MARKER, DEFAULT_RESET_POLICY)).toThrow(/no packages section/);
  });

  it('reads Android 7 toolbox ps', () => {
    const ps = [
      'USER      PID   PPID  VSIZE  RSS   WCHAN              PC  NAME',
      'root      1     0     10632  1460  SyS_epoll_ 0000000000 S /init',
      'shell     3120  1     4000   900   hrtimer_na 0000000000 S sleep',
    ].join('\n');
    expect(parseProcesses(ps, null)).toEqual([{ pid: 3120, args: 'sleep' }]);
  });

  it('never throws on hostile section text (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.uint8Array({ maxLength: 200 }), (text, bytes) => {
        parsePackageList(text);
        parseSettingsList(text);
        parseProcesses(text, 1);
        for (const p of parsePathList(Buffer.from(bytes))) expect(p.startsWith('/')).toBe(true);
        parseItemOutcomes(text, MARKER);
      }),
    );
  });

  it('the script quotes every root and uses the marker', () => {
    const script = readingScript({ roots: ["/sdcard/it's"] }, MARKER);
    expect(script).toContain(`find -H '/sdcard/it'\\''s' -mindepth 1 -type d -print0`);
    expect(script.match(new RegExp(`${MARKER}:`, 'g'))).toHaveLength(9);
    expect(() => readingMarker(() => 'not hex')).toThrow();
  });
});

describe('difference from the baseline', () => {
  const policy = DEFAULT_RESET_POLICY;

  it('is clean for the same reading', () => {
    expect(isClean(diffReading(reading(), reading(), policy))).toBe(true);
  });

  it('names what a tenant left, only the topmost of an added tree', () => {
    const now = reading({
      packages: {
        ...reading().packages,
        'com.tenant.app': { path: '/data/app/t/base.apk', versionCode: 1 },
      },
      dirs: [...reading().dirs, '/sdcard/Download/stash', '/sdcard/Download/stash/deep'],
      files: [...reading().files, '/sdcard/Download/stash/deep/f', '/data/local/tmp/tenant.bin'],
      settings: {
        global: { adb_enabled: '0' },
        secure: { accessibility_enabled: '0', some_marker: '1' },
        system: {},
      },
      processes: [...reading().processes, { pid: 4200, args: 'sleep 600' }],
    });
    const diff = diffReading(reading(), now, policy);
    expect(diff.addedPackages).toEqual(['com.tenant.app']);
    expect(diff.addedPaths).toEqual(['/data/local/tmp/tenant.bin', '/sdcard/Download/stash']);
    expect(diff.settings).toEqual([
      { table: 'global', key: 'adb_enabled', value: '1', now: '0' },
      { table: 'secure', key: 'some_marker', value: null, now: '1' },
      { table: 'system', key: 'font_scale', value: '1.0', now: null },
    ]);
    expect(diff.processes).toEqual([{ pid: 4200, args: 'sleep 600' }]);
    expect(describeDiff(diff)).toContain('package com.tenant.app added');
  });

  it('sees a replaced, a removed baseline package and a removed baseline file', () => {
    const now = reading({
      packages: { 'com.farm.app': { path: '/data/app/~~c==/com.farm.app-d==/base.apk', versionCode: 8 } },
      files: ['/data/local/tmp/farm/config'],
    });
    const diff = diffReading(reading(), now, policy);
    expect(diff.movedPackages.map((m) => m.name)).toEqual(['com.farm.app']);
    expect(diff.missingPaths).toEqual(['/sdcard/Download/readme.txt']);
    expect(diffReading(reading(), reading({ packages: {} }), policy).missingPackages).toEqual([
      'com.farm.app',
    ]);
  });

  it("leaves the farm's own settings, packages and processes alone", () => {
    const farm = parseResetPolicy({
      managedSettings: ['global:adb_*'],
      keepPackages: ['com.farm.agent'],
      keepProcesses: ['^farm-agent '],
    });
    const now = reading({
      packages: { ...reading().packages, 'com.farm.agent': { path: '/x', versionCode: 1 } },
      settings: { ...reading().settings, global: { adb_enabled: '0' } },
      processes: [...reading().processes, { pid: 9, args: 'farm-agent --daemon' }],
    });
    expect(isClean(diffReading(reading(), now, farm))).toBe(true);
    expect(isClean(diffReading(reading(), now, policy))).toBe(false);
  });

  it('never kills adbd (it runs as the shell user), known by its SELinux domain, not its name', () => {
    const now = reading({
      processes: [
        { pid: 700, args: 'adbd --root_seclabel=u:r:su:s0', label: 'u:r:adbd:s0' },
        { pid: 701, args: 'adbd --root_seclabel=u:r:su:s0', label: 'u:r:shell:s0' },
        { pid: 702, args: '/system/bin/adbd' },
        { pid: 703, args: '/data/local/tmp/adbd' },
      ],
    });
    expect(diffReading(reading(), now, policy).processes.map((p) => p.pid)).toEqual([701, 703]);
    const ps = [
      '  PID  PPID USER         LABEL                           ARGS',
      '  602     1 shell        u:r:adbd:s0                     adbd --root_seclabel=u:r:su:s0',
    ].join('\n');
    expect(parseProcesses(ps, null)).toEqual([
      { pid: 602, args: 'adbd --root_seclabel=u:r:su:s0', label: 'u:r:adbd:s0' },
    ]);
  });

  it('an empty setting and an absent one are the same (put cannot write empty)', () => {
    const base = reading({ settings: { global: { a: '' }, secure: {}, system: {} } });
    expect(
      isClean(diffReading(base, reading({ settings: { global: {}, secure: {}, system: {} } }), policy)),
    ).toBe(true);
  });
});

describe('package decisions', () => {
  const HELPER = 'com.bridge.helper';
  const helpers = new Map([[HELPER, new Set(['a'.repeat(64), 'b'.repeat(64)])]]);
  const pkg = (path: string, versionCode = 1, sha256?: string) => ({
    path,
    versionCode,
    ...(sha256 ? { sha256 } : {}),
  });

  it("keeps the bridge's helpers when their APK is a published release, uninstalls anything else", () => {
    const reading = { packages: { [HELPER]: pkg('/h'), 'com.tenant': pkg('/t') } };
    const sums = new Map([['/h', 'a'.repeat(64)]]);
    expect(
      decidePackages(
        { addedPackages: [HELPER, 'com.tenant'], movedPackages: [], missingPackages: [] },
        reading,
        sums,
        helpers,
      ).uninstall,
    ).toEqual(['com.tenant']);
    const impostor = new Map([['/h', 'c'.repeat(64)]]);
    expect(
      decidePackages(
        { addedPackages: [HELPER], movedPackages: [], missingPackages: [] },
        reading,
        impostor,
        helpers,
      ).uninstall,
    ).toEqual([HELPER]);
  });

  it('a helper in the baseline that the bridge updated follows the release; one the tenant replaced goes', () => {
    const moved = { name: HELPER, baseline: pkg('/old', 1, 'a'.repeat(64)), now: pkg('/new', 2) };
    const reading = { packages: { [HELPER]: pkg('/new', 2) } };
    const updated = decidePackages(
      { addedPackages: [], movedPackages: [moved], missingPackages: [] },
      reading,
      new Map([['/new', 'b'.repeat(64)]]),
      helpers,
    );
    expect(updated.failures).toEqual([]);
    expect(updated.baseline[HELPER]).toEqual({ path: '/new', versionCode: 2, sha256: 'b'.repeat(64) });
    const replaced = decidePackages(
      { addedPackages: [], movedPackages: [moved], missingPackages: [] },
      reading,
      new Map([['/new', 'c'.repeat(64)]]),
      helpers,
    );
    expect(replaced.uninstall).toEqual([HELPER]);
    expect(replaced.baseline[HELPER]).toBeNull();
    const gone = decidePackages(
      { addedPackages: [], movedPackages: [], missingPackages: [HELPER] },
      { packages: {} },
      new Map(),
      helpers,
    );
    expect(gone.failures).toEqual([]);
    expect(gone.baseline[HELPER]).toBeNull();
  });

  it('a farm package reinstalled with the same APK stays; replaced or uninstalled it cannot be restored', () => {
    const moved = { name: 'com.farm', baseline: pkg('/old', 7, 'd'.repeat(64)), now: pkg('/new', 7) };
    const reading = { packages: { 'com.farm': pkg('/new', 7) } };
    const diff = { addedPackages: [], movedPackages: [moved], missingPackages: [] };
    expect(decidePackages(diff, reading, new Map([['/new', 'd'.repeat(64)]]), helpers).failures).toEqual([]);
    expect(decidePackages(diff, reading, new Map([['/new', 'e'.repeat(64)]]), helpers).failures).toEqual([
      expect.stringMatching(/com\.farm was replaced during the lease \(versionCode 7 -> 7/),
    ]);
    expect(decidePackages(diff, reading, new Map(), helpers).failures).toHaveLength(1);
    expect(
      decidePackages(
        { addedPackages: [], movedPackages: [], missingPackages: ['com.farm'] },
        { packages: {} },
        new Map(),
        helpers,
      ).failures,
    ).toEqual([expect.stringMatching(/com\.farm was uninstalled during the lease/)]);
  });
});

describe('reset scripts', () => {
  it('batch every item in one script with quoted arguments and per-item outcomes', () => {
    const rm = removeScript(['/sdcard/a b', "/data/local/tmp/it's"], MARKER);
    expect(rm).toBe(
      `rm -rf -- '/sdcard/a b' 2>&1; echo ${MARKER}:0:$?\nrm -rf -- '/data/local/tmp/it'\\''s' 2>&1; echo ${MARKER}:1:$?`,
    );
    expect(() => removeScript(['/sdcard/x\ny'], MARKER)).toThrow(/line break/);
    const settings = settingsScript(
      [
        { table: 'secure', key: 'some_marker', value: null, now: '1' },
        { table: 'global', key: 'k', value: "v'1", now: null },
        { table: 'global', key: 'e', value: '', now: 'x' },
      ],
      MARKER,
    );
    expect(settings).toContain('settings delete secure some_marker');
    expect(settings).toContain(`settings put global k 'v'\\''1'`);
    expect(settings).toContain('settings delete global e');
  });

  it('reads per-item outcomes, also text answers such as pm uninstall', () => {
    const out = `${MARKER}:0\nSuccess\n${MARKER}:1\nFailure [DELETE_FAILED_INTERNAL_ERROR]\n${MARKER}:2:0\n${MARKER}:3:1\n`;
    const outcomes = parseItemOutcomes(out, MARKER);
    expect(outcomes.get(0)).toBe('Success');
    expect(outcomes.get(1)).toBe('Failure [DELETE_FAILED_INTERNAL_ERROR]');
    expect(outcomes.get(2)).toBe('0');
    expect(outcomes.get(3)).toBe('1');
  });
});

describe('reset policy', () => {
  it('takes the safe defaults and names a bad field', () => {
    expect(parseResetPolicy({})).toEqual(DEFAULT_RESET_POLICY);
    expect(() => parseResetPolicy({ roots: ['relative'] })).toThrow(/roots\.0: must be an absolute path/);
    expect(() => parseResetPolicy({ managedSettings: ['nope'] })).toThrow(/managedSettings\.0/);
    expect(() => parseResetPolicy({ keepProcesses: ['('] })).toThrow(
      /keepProcesses\.0: must be a regular expression/,
    );
    expect(() => parseResetPolicy({ extra: 1 })).toThrow(/reset policy/);
    expect(parseResetPolicy({ leaveAlone: ['/sdcard/Farm/'] }).leaveAlone).toEqual(['/sdcard/Farm']);
  });

  it('a policy file: strict JSON, the file and the field named in the error', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'reset-policy-'));
    try {
      const file = path.join(dir, 'policy.json');
      await writeFile(file, '{"keepPackages": ["com.farm.agent"]}');
      expect(readResetPolicyFile(file).keepPackages).toEqual(['com.farm.agent']);
      await writeFile(file, '{"keepPackages": ["com.a"], "keepPackages": ["com.b"]}');
      expect(() => readResetPolicyFile(file)).toThrow(/not JSON/);
      await writeFile(file, '{"leaveAlone": ["/sdcard/../data"]}');
      expect(() => readResetPolicyFile(file)).toThrow(
        `reset policy ${file}: leaveAlone.0: must not contain ..`,
      );
      expect(() => readResetPolicyFile(path.join(dir, 'missing.json'))).toThrow(/ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
