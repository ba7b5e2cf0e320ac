import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseDumpsysVersion,
  parseListPackagesVersion,
  parsePmPath,
  parseSha256sum,
} from '../../src/protocol/helper/package-manager.ts';

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

describe('pm path and sha256sum parsers', () => {
  it('read the APK path from `pm path`', () => {
    expect(parsePmPath(`package:/data/app/~~x==/${PKG}-y==/base.apk\n`)).toBe(
      `/data/app/~~x==/${PKG}-y==/base.apk`,
    );
    expect(parsePmPath('package:/data/app/a/base.apk\r\n')).toBe('/data/app/a/base.apk');
    expect(parsePmPath('')).toBeNull();
    expect(parsePmPath('package:/data/app/a/base.odex\n')).toBeNull();
  });

  it('read the digest from `sha256sum`', () => {
    const digest = 'a'.repeat(32) + '0123456789abcdef'.repeat(2);
    expect(parseSha256sum(`${digest}  /data/app/a/base.apk\n`)).toBe(digest);
    expect(parseSha256sum(`sha256sum: /x: No such file or directory\n`)).toBeNull();
    expect(parseSha256sum(`${digest.toUpperCase()}  /x\n`)).toBeNull();
  });

  it('property: a printed path or digest reads back; any text never throws', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._=~-]{1,20}$/);
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.string(), (parts, noise) => {
        const path = `/${parts.join('/')}/base.apk`;
        expect(parsePmPath(`package:${path}\n`)).toBe(path);
        const found = parsePmPath(noise);
        if (found !== null) expect(noise).toContain(`package:${found}`);
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string(), (digest, noise) => {
        expect(parseSha256sum(`${digest}  /x.apk\n`)).toBe(digest);
        const found = parseSha256sum(noise);
        if (found !== null) expect(noise.startsWith(found)).toBe(true);
      }),
    );
  });
});
