import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDumpsysVersion, parseListPackagesVersion } from '../../src/helpers/snapshot/ensure-helper.ts';

const PKG = 'com.callstack.agentdevice.snapshothelper';

describe('installed-version parsers', () => {
  it('read the exact package from `cmd package list packages --show-versioncode`', () => {
    const out = [
      `package:${PKG}.test versionCode:99`,
      `package:${PKG} versionCode:13003`,
      'package:com.android.shell versionCode:34',
    ].join('\n');
    expect(parseListPackagesVersion(out, PKG)).toBe(13003);
    expect(parseListPackagesVersion(`package:${PKG}.test versionCode:99\n`, PKG)).toBeNull();
    expect(parseListPackagesVersion('', PKG)).toBeNull();
  });

  it('read versionCode from the package section of `dumpsys package`', () => {
    const out = `Packages:\n  Package [${PKG}] (5c4c1a1):\n    userId=10123\n    versionCode=2 minSdk=23 targetSdk=29\n    versionName=0.2.0\n`;
    expect(parseDumpsysVersion(out, PKG)).toBe(2);
    expect(parseDumpsysVersion('Unable to find package: x\n', PKG)).toBeNull();
  });

  it('property: never throw, and only report a version that is printed for that package', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const a = parseListPackagesVersion(s, PKG);
        if (a !== null) expect(s).toContain(`package:${PKG} versionCode:${a}`);
        const b = parseDumpsysVersion(s, PKG);
        if (b !== null) expect(s).toContain(`versionCode=${b}`);
      }),
    );
  });
});
