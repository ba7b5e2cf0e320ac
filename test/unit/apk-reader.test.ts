import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { readApkInfo } from '../../src/artifacts/apk-file.ts';
import { BridgeError } from '../../src/errors.ts';
import { resolveClassName } from '../../src/protocol/apk/apk-manifest.ts';
import { type ApkInfo, apkSignerMatches, parseApkInfo } from '../../src/protocol/apk/apk-reader.ts';
import { crc32, extractZipEntry, findZipEntry, readZipDirectory } from '../../src/protocol/apk/apk-zip.ts';

const FIXTURES_DIR = join(import.meta.dirname, '../fixtures/apk');

interface Fixture {
  file: string;
  packageName: string;
  versionCode: number;
  versionName: string;
  minSdk: number;
  targetSdk: number;
  testOnly: boolean;
  instrumentations: Array<{ name: string; targetPackage: string }>;
  key: 'a' | 'b' | null;
  signatureSchemes: string[];
  signerSha256: string | null;
  sha256: string;
  sizeBytes: number;
}

const fixtures = (
  JSON.parse(readFileSync(join(FIXTURES_DIR, 'FIXTURES.json'), 'utf8')) as { fixtures: Fixture[] }
).fixtures;

function fixture(file: string): { meta: Fixture; path: string; bytes: Uint8Array } {
  const meta = fixtures.find((f) => f.file === file);
  if (meta === undefined) throw new Error(`no fixture ${file}`);
  const path = join(FIXTURES_DIR, file);
  return { meta, path, bytes: readFileSync(path) };
}

/** Runs `fn` and returns what it threw, or undefined. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectInvalid(bytes: Uint8Array, message?: RegExp): BridgeError {
  const error = thrown(() => parseApkInfo(bytes));
  expect(error).toBeInstanceOf(BridgeError);
  const bridgeError = error as BridgeError;
  expect(bridgeError.code).toBe('INVALID_ARGUMENT');
  expect(bridgeError.message).toMatch(/^not a valid APK: /);
  if (message !== undefined) expect(bridgeError.message).toMatch(message);
  return bridgeError;
}

/** Either parses or fails with INVALID_ARGUMENT; anything else (RangeError, TypeError, ...) fails the property. */
function parsesOrInvalid(bytes: Uint8Array): boolean {
  const error = thrown(() => parseApkInfo(bytes));
  if (error === undefined) return true;
  if (!(error instanceof BridgeError) || error.code !== 'INVALID_ARGUMENT') {
    throw new Error(`unexpected error: ${String(error)}`, { cause: error });
  }
  return true;
}

/** A stored (uncompressed) ZIP with the given entries, for crafted inputs. */
function makeZip(entries: Array<{ name: string; data: Uint8Array }>): Uint8Array {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(10, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(10, 4);
    central.writeUInt16LE(10, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, Buffer.from(data));
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}

function manifestOf(bytes: Uint8Array): Uint8Array {
  const directory = readZipDirectory(bytes);
  const entry = findZipEntry(directory, 'AndroidManifest.xml');
  if (entry === undefined) throw new Error('fixture without manifest');
  return extractZipEntry(bytes, directory, entry, 1 << 20);
}

describe('fixtures', () => {
  it('lists every fixture the lead asked for', () => {
    expect(fixtures.map((f) => f.file)).toEqual(
      expect.arrayContaining([
        'snapshot-helper-v1.apk',
        'snapshot-helper-v2.apk',
        'snapshot-helper-v1-rebuilt.apk',
        'snapshot-helper-v2-keyb.apk',
        'plain-app.apk',
        'a11y-service.apk',
      ]),
    );
  });

  it.each(fixtures.map((f) => [f.file]))('%s matches its sha256 and size in FIXTURES.json', (file) => {
    const { meta, bytes } = fixture(file);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(meta.sha256);
    expect(bytes.length).toBe(meta.sizeBytes);
    expect(bytes.length).toBeLessThan(16 * 1024);
  });

  it('rebuilt v1 has the same versionCode but different bytes', () => {
    const v1 = fixture('snapshot-helper-v1.apk').meta;
    const rebuilt = fixture('snapshot-helper-v1-rebuilt.apk').meta;
    expect(rebuilt.versionCode).toBe(v1.versionCode);
    expect(rebuilt.sha256).not.toBe(v1.sha256);
  });
});

/** The fixtures that declare `<service>`s (test/fixtures/apk/manifests/*.xml). */
const SERVICES: Record<string, ApkInfo['services']> = {
  'a11y-service.apk': [
    {
      name: 'dev.glass.a11y.GlassAccessibilityService',
      permission: 'android.permission.BIND_ACCESSIBILITY_SERVICE',
    },
  ],
};

/** The fixtures' `<activity>`s (the a11y stand-in declares the doctor's self-test screen). */
const ACTIVITIES: Record<string, ApkInfo['activities']> = {
  'a11y-service.apk': [{ name: 'dev.glass.a11y.SelfTestActivity', exported: true }],
};

describe('readApkInfo on the fixtures', () => {
  it.each(fixtures.map((f) => [f.file]))('%s equals FIXTURES.json', async (file) => {
    const { meta, path } = fixture(file);
    const info = await readApkInfo(path);
    expect(info).toEqual({
      packageName: meta.packageName,
      versionCode: meta.versionCode,
      versionName: meta.versionName,
      minSdk: meta.minSdk,
      targetSdk: meta.targetSdk,
      testOnly: meta.testOnly,
      debuggable: false,
      instrumentations: meta.instrumentations,
      services: SERVICES[file] ?? [],
      activities: ACTIVITIES[file] ?? [],
      signerCertSha256: meta.signerSha256 === null ? [] : [meta.signerSha256],
    } satisfies ApkInfo);
  });

  it('resolves the relative instrumentation class name', async () => {
    const info = await readApkInfo(fixture('snapshot-helper-v1.apk').path);
    expect(info.instrumentations).toEqual([
      {
        name: 'com.callstack.agentdevice.snapshothelper.SnapshotInstrumentation',
        targetPackage: 'com.callstack.agentdevice.snapshothelper',
      },
    ]);
  });

  it('reads the same from a Uint8Array (also at a non-zero byteOffset) as from the path', async () => {
    for (const { file } of fixtures) {
      const { path, bytes } = fixture(file);
      const fromPath = await readApkInfo(path);
      expect(await readApkInfo(new Uint8Array(bytes))).toEqual(fromPath);
      const padded = new Uint8Array(bytes.length + 7);
      padded.set(bytes, 7);
      expect(await readApkInfo(padded.subarray(7))).toEqual(fromPath);
    }
  });

  it('a missing file is NOT_FOUND, a directory is INVALID_ARGUMENT', async () => {
    await expect(readApkInfo(join(FIXTURES_DIR, 'does-not-exist.apk'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(readApkInfo(FIXTURES_DIR)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe('signer certificates', () => {
  const apksignerDigest = new Map<string, string>();

  beforeAll(async () => {
    // apksigner is Java: run it once per distinct signing setup, in parallel.
    const files = ['snapshot-helper-v1.apk', 'snapshot-helper-v2-keyb.apk', 'plain-app-v1only.apk'];
    await Promise.all(
      files.map(async (file) => {
        const { stdout } = await promisify(execFile)('apksigner', [
          'verify',
          '--print-certs',
          join(FIXTURES_DIR, file),
        ]);
        const match = /^Signer #1 certificate SHA-256 digest: ([0-9a-f]{64})$/m.exec(stdout);
        if (match?.[1] === undefined) throw new Error(`apksigner printed no digest for ${file}:\n${stdout}`);
        apksignerDigest.set(file, match[1]);
      }),
    );
  }, 120_000);

  it.each([['snapshot-helper-v1.apk'], ['snapshot-helper-v2-keyb.apk'], ['plain-app-v1only.apk']])(
    '%s: digest equals apksigner verify --print-certs',
    async (file) => {
      const info = await readApkInfo(fixture(file).path);
      expect(info.signerCertSha256).toEqual([apksignerDigest.get(file)]);
    },
  );

  it('key A and key B differ; v1-only (PKCS#7) and v2 give the same digest for key A', async () => {
    const a = await readApkInfo(fixture('snapshot-helper-v2.apk').path);
    const b = await readApkInfo(fixture('snapshot-helper-v2-keyb.apk').path);
    const v1only = await readApkInfo(fixture('plain-app-v1only.apk').path);
    expect(a.signerCertSha256).toHaveLength(1);
    expect(b.signerCertSha256).toHaveLength(1);
    expect(a.signerCertSha256).not.toEqual(b.signerCertSha256);
    expect(v1only.signerCertSha256).toEqual(a.signerCertSha256);
  });

  it('falls back to v3 and then to v1 when the v2 block is absent (block ids rewritten in memory)', () => {
    const { bytes } = fixture('snapshot-helper-v2-keyb.apk');
    const expected = parseApkInfo(bytes).signerCertSha256;
    const directory = readZipDirectory(bytes);
    const v2Id = Buffer.from([0x1a, 0x87, 0x09, 0x71]);
    const at = Buffer.from(bytes).lastIndexOf(v2Id, directory.centralDirectoryOffset);
    expect(at).toBeGreaterThan(0);

    // Hide the v1 signature file by renaming it in the central directory only.
    const hideV1 = (apk: Uint8Array): void => {
      const name = Buffer.from('META-INF/FIXTURE.EC');
      const pos = Buffer.from(apk).indexOf(name, directory.centralDirectoryOffset);
      expect(pos).toBeGreaterThan(0);
      apk.set(Buffer.from('META-INF/FIXTURE.XX'), pos);
    };

    const asV3 = new Uint8Array(bytes);
    asV3.set([0xc0, 0x68, 0x53, 0xf0], at); // 0xf05368c0: same signer layout as v2
    hideV1(asV3);
    expect(parseApkInfo(asV3).signerCertSha256).toEqual(expected);

    const unknownId = new Uint8Array(bytes);
    unknownId.set([0x01, 0x02, 0x03, 0x04], at); // no v2/v3 block left: META-INF/*.EC (PKCS#7)
    expect(parseApkInfo(unknownId).signerCertSha256).toEqual(expected);

    hideV1(unknownId); // no scheme left at all: reads as unsigned
    expect(parseApkInfo(unknownId).signerCertSha256).toEqual([]);
  });

  it('apkSignerMatches: same key yes, other key no, unsigned never', async () => {
    const v1 = await readApkInfo(fixture('snapshot-helper-v1.apk').path);
    const v2 = await readApkInfo(fixture('snapshot-helper-v2.apk').path);
    const keyB = await readApkInfo(fixture('snapshot-helper-v2-keyb.apk').path);
    const unsigned = await readApkInfo(fixture('plain-app-unsigned.apk').path);
    expect(apkSignerMatches(v1, v2)).toBe(true);
    expect(apkSignerMatches(v1, keyB)).toBe(false);
    expect(apkSignerMatches(keyB, v2)).toBe(false);
    expect(apkSignerMatches(unsigned, unsigned)).toBe(false);
    expect(apkSignerMatches(v1, unsigned)).toBe(false);
    expect(
      apkSignerMatches(v1, { ...v1, signerCertSha256: [...v1.signerCertSha256, ...keyB.signerCertSha256] }),
    ).toBe(false);
  });
});

describe('invalid input', () => {
  const real = fixture('snapshot-helper-v1.apk').bytes;
  const realManifest = manifestOf(real);

  it('rejects empty input, garbage and a text file', () => {
    expectInvalid(new Uint8Array(0), /too short/);
    expectInvalid(new Uint8Array(4096).fill(0x41), /end of central directory/);
    expectInvalid(Buffer.from('<manifest package="x"/>\n'), /too short|end of central directory/);
  });

  it('rejects a ZIP without AndroidManifest.xml with a clear message', () => {
    const zip = makeZip([{ name: 'classes.dex', data: Buffer.from('dex\n035\0') }]);
    expectInvalid(zip, /^not a valid APK: no AndroidManifest\.xml entry$/);
  });

  it('accepts a crafted stored ZIP around a real manifest (control for the crafted cases)', () => {
    const info = parseApkInfo(makeZip([{ name: 'AndroidManifest.xml', data: realManifest }]));
    expect(info.packageName).toBe('com.callstack.agentdevice.snapshothelper');
    expect(info.signerCertSha256).toEqual([]);
  });

  it('rejects duplicate AndroidManifest.xml entries', () => {
    const zip = makeZip([
      { name: 'AndroidManifest.xml', data: realManifest },
      { name: 'AndroidManifest.xml', data: realManifest },
    ]);
    expectInvalid(zip, /duplicate ZIP entry AndroidManifest\.xml/);
  });

  it('rejects a text (non-binary) manifest', () => {
    const zip = makeZip([{ name: 'AndroidManifest.xml', data: Buffer.from('<manifest package="a.b"/>') }]);
    expectInvalid(zip, /not binary XML/);
  });

  it('does not hang on a zero-size chunk (adbkit-apkreader alone would loop forever)', async () => {
    const xml = Buffer.alloc(16);
    xml.writeUInt16LE(0x0003, 0);
    xml.writeUInt16LE(8, 2);
    xml.writeUInt32LE(16, 4);
    xml.writeUInt16LE(0x0000, 8); // NULL chunk
    xml.writeUInt16LE(8, 10);
    xml.writeUInt32LE(0, 12); // size 0
    const zip = makeZip([{ name: 'AndroidManifest.xml', data: xml }]);
    // A synchronous infinite loop cannot be interrupted by vitest's timeout: parse in a child
    // process that is killed after 20 s, so a regression fails instead of wedging the worker.
    const script = [
      `import { parseApkInfo } from ${JSON.stringify(join(import.meta.dirname, '../../src/protocol/apk/apk-reader.ts'))};`,
      "try { parseApkInfo(Buffer.from(process.argv[1], 'base64')); console.log('parsed'); }",
      "catch (error) { console.log(error.code + ': ' + error.message); }",
    ].join('\n');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script, Buffer.from(zip).toString('base64')],
      { timeout: 20_000 },
    );
    expect(stdout.trim()).toBe('INVALID_ARGUMENT: not a valid APK: AndroidManifest.xml: bad chunk size');
    expectInvalid(zip, /bad chunk size/);
  });

  it('rejects a string pool whose overlapping strings would decode to more than the budget', () => {
    const count = 20_000;
    const text = 2_000;
    const size = 28 + count * 4 + 2 + text * 2 + 2;
    const pool = Buffer.alloc(size);
    pool.writeUInt16LE(0x0001, 0);
    pool.writeUInt16LE(28, 2);
    pool.writeUInt32LE(size, 4);
    pool.writeUInt32LE(count, 8);
    pool.writeUInt32LE(28 + count * 4, 20); // every offset is 0: all strings are the same 2,000 chars
    pool.writeUInt16LE(text, 28 + count * 4);
    const header = Buffer.alloc(8);
    header.writeUInt16LE(0x0003, 0);
    header.writeUInt16LE(8, 2);
    header.writeUInt32LE(8 + size, 4);
    const zip = makeZip([{ name: 'AndroidManifest.xml', data: Buffer.concat([header, pool]) }]);
    expectInvalid(zip, /string pool too large/);
  });

  it('detects a corrupted manifest through the CRC', () => {
    const copy = new Uint8Array(real);
    const directory = readZipDirectory(copy);
    const entry = findZipEntry(directory, 'AndroidManifest.xml');
    if (entry === undefined) throw new Error('no manifest');
    const dataStart =
      entry.localHeaderOffset +
      30 +
      (copy[entry.localHeaderOffset + 26] ?? 0) +
      (copy[entry.localHeaderOffset + 28] ?? 0);
    copy[dataStart + 5] = (copy[dataStart + 5] ?? 0) ^ 0x10;
    expectInvalid(copy, /AndroidManifest\.xml/);
  });

  it('property: arbitrary bytes are rejected with INVALID_ARGUMENT', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
        expectInvalid(bytes);
      }),
      { numRuns: 500 },
    );
  });

  it('property: every truncation of a real APK is rejected with INVALID_ARGUMENT', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: real.length - 1 }), (length) => {
        expectInvalid(real.subarray(0, length));
      }),
      { numRuns: 500 },
    );
  });

  it('property: bit flips and byte overwrites of a real APK never throw anything but INVALID_ARGUMENT', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ at: fc.nat({ max: real.length - 1 }), value: fc.integer({ min: 0, max: 255 }) }),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        (edits) => {
          const copy = new Uint8Array(real);
          for (const { at, value } of edits) copy[at] = value;
          return parsesOrInvalid(copy);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('property: corrupted manifests (past the CRC, straight into the binary XML parser) never throw anything else', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            at: fc.nat({ max: realManifest.length - 1 }),
            value: fc.integer({ min: 0, max: 255 }),
          }),
          {
            minLength: 1,
            maxLength: 6,
          },
        ),
        fc.integer({ min: 0, max: realManifest.length }),
        (edits, length) => {
          const copy = new Uint8Array(realManifest.subarray(0, length));
          for (const { at, value } of edits) if (at < copy.length) copy[at] = value;
          return parsesOrInvalid(makeZip([{ name: 'AndroidManifest.xml', data: copy }]));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('property: corrupted signing blocks and v1 signature files never throw anything else', () => {
    const v1only = fixture('plain-app-v1only.apk').bytes;
    const directory = readZipDirectory(real);
    const blockRegion = {
      from: directory.centralDirectoryOffset - 4096,
      to: directory.centralDirectoryOffset,
    };
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), {
          minLength: 1,
          maxLength: 6,
        }),
        (useV1, edits) => {
          if (useV1) {
            const v1Directory = readZipDirectory(v1only);
            const rsa = v1Directory.entries.find((e) => e.name.endsWith('.RSA'));
            if (rsa === undefined) throw new Error('no .RSA');
            const cert = extractZipEntry(v1only, v1Directory, rsa, 1 << 20);
            const copy = new Uint8Array(cert);
            for (const { at, value } of edits) copy[at % copy.length] = value;
            return parsesOrInvalid(
              makeZip([
                { name: 'AndroidManifest.xml', data: realManifest },
                { name: 'META-INF/CERT.RSA', data: copy },
              ]),
            );
          }
          const copy = new Uint8Array(real);
          const span = Math.max(1, blockRegion.to - Math.max(0, blockRegion.from));
          for (const { at, value } of edits) copy[Math.max(0, blockRegion.from) + (at % span)] = value;
          return parsesOrInvalid(copy);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('resolveClassName', () => {
  it('resolves relative names like Android', () => {
    expect(resolveClassName('a.b', '.Foo')).toBe('a.b.Foo');
    expect(resolveClassName('a.b', 'Foo')).toBe('a.b.Foo');
    expect(resolveClassName('a.b', 'c.d.Foo')).toBe('c.d.Foo');
  });
});
