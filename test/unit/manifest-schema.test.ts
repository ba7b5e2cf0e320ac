import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import {
  compareSemver,
  HELPER_NAME_RE,
  HelperManifestSchema,
  isSemver,
  KNOWN_MANIFEST_FIELDS,
  normalizeSha256,
  parseSemver,
  SEMVER_RE,
  SHA256_RE,
  validateManifest,
} from '../../src/manifest/index.ts';
import {
  isJavaComponent,
  isJavaPackageName,
  resolveComponent,
} from '../../src/protocol/android/java-names.ts';

const FIXTURE = new URL('../fixtures/manifests/agent-device-0.13.3.json', import.meta.url);
const agentDevice = (): Record<string, unknown> => JSON.parse(readFileSync(FIXTURE, 'utf8'));
const HEX = '0123456789abcdef'.repeat(4);

function errorsOf(patch: Record<string, unknown>, base = agentDevice()): { path: string; message: string }[] {
  const input = { ...base, ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete input[k];
  return validateManifest(input).errors;
}

function expectOnly(patch: Record<string, unknown>, path: string, message: string): void {
  const errors = errorsOf(patch);
  expect(errors).toHaveLength(1);
  expect(errors[0]?.path).toBe(path);
  expect(errors[0]?.message).toContain(message);
}

function expectValid(patch: Record<string, unknown>, base = agentDevice()): void {
  expect(errorsOf(patch, base)).toEqual([]);
}

describe('validateManifest: the agent-device manifest', () => {
  it('is accepted unchanged and returned equal', () => {
    const input = agentDevice();
    const result = validateManifest(input);
    expect(result).toEqual({ valid: true, manifest: input, errors: [] });
    expect(HelperManifestSchema.safeParse(input).success).toBe(true);
  });

  it('normalises sha256 and signingCertSha256 (trim + lower case) and copies installArgs', () => {
    const input: Record<string, unknown> = {
      ...agentDevice(),
      sha256: ` ${HEX.toUpperCase()}\n`,
      signingCertSha256: `\t${HEX.toUpperCase()}`,
    };
    const result = validateManifest(input);
    expect(result.valid).toBe(true);
    expect(result.manifest?.sha256).toBe(HEX);
    expect(result.manifest?.signingCertSha256).toBe(HEX);
    expect(result.manifest?.installArgs).toEqual(input['installArgs']);
    expect(result.manifest?.installArgs).not.toBe(input['installArgs']);
  });

  it('keeps unknown fields as inert own properties (never trusted, never on the prototype)', () => {
    const input = JSON.parse(
      '{"futureField":{"a":1},"__proto__":{"polluted":true},' + JSON.stringify(agentDevice()).slice(1),
    );
    const result = validateManifest(input);
    expect(result.valid).toBe(true);
    const m = result.manifest as Record<string, unknown>;
    expect(m['futureField']).toEqual({ a: 1 });
    expect(Object.hasOwn(m, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype);
    expect(m['polluted']).toBeUndefined();
    expect(KNOWN_MANIFEST_FIELDS).not.toContain('futureField');
  });
});

describe('validateManifest: every problem, each naming field and rule', () => {
  it('collects all problems at once', () => {
    const errors = errorsOf({
      version: 'v1',
      versionCode: '13003',
      minSdk: 40,
      targetSdk: 30,
      installArgs: ['install', '-r', '-r', '--user'],
      apkUrl: 'http://example.com/h.apk',
      sha256: 'abc',
      packageName: undefined,
    });
    expect(errors.map((e) => e.path)).toEqual([
      'version',
      'apkUrl',
      'sha256',
      'packageName',
      'versionCode',
      'installArgs.2',
      'installArgs.3',
      'minSdk',
    ]);
  });

  it.each([[null], [[]], ['manifest'], [42], [true]])(
    'rejects a non-object document %j at path ""',
    (input) => {
      const result = validateManifest(input);
      expect(result).toMatchObject({ valid: false, manifest: null });
      expect(result.errors).toEqual([
        { path: '', message: expect.stringContaining('must be a JSON object') },
      ]);
    },
  );

  it('reports every missing required field', () => {
    expect(validateManifest({}).errors.map((e) => e.path)).toEqual([
      'name',
      'version',
      'apkUrl',
      'sha256',
      'packageName',
      'versionCode',
      'instrumentationRunner',
      'minSdk',
      'targetSdk',
      'installArgs',
    ]);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['name with capitals', { name: 'Helper' }, 'name', 'lowercase slug'],
    ['name with ..', { name: 'a..b' }, 'name', 'no ".."'],
    ['name with /', { name: 'a/b' }, 'name', 'lowercase slug'],
    ['name ending in -', { name: 'helper-' }, 'name', 'lowercase slug'],
    ['name as number', { name: 7 }, 'name', 'must be a string (got number)'],
    ['version with v', { version: 'v0.13.3' }, 'version', 'semantic version'],
    ['version with leading zero', { version: '01.2.3' }, 'version', 'semantic version'],
    ['versionCode as string', { versionCode: '13003' }, 'versionCode', 'must be a JSON number, not a string'],
    ['versionCode fraction', { versionCode: 1.5 }, 'versionCode', 'must be an integer (got 1.5)'],
    ['versionCode 0', { versionCode: 0 }, 'versionCode', 'between 1 and 2147483647'],
    ['versionCode 2^31', { versionCode: 2 ** 31 }, 'versionCode', 'between 1 and 2147483647'],
    ['versionCode null', { versionCode: null }, 'versionCode', 'must be an integer (got null)'],
    ['packageName one segment', { packageName: 'snapshothelper' }, 'packageName', 'Java package name'],
    ['packageName keyword', { packageName: 'com.class.x' }, 'packageName', 'Java package name'],
    ['packageName digit start', { packageName: 'com.1x' }, 'packageName', 'Java package name'],
    ['packageName with ;', { packageName: 'com.x;reboot' }, 'packageName', 'Java package name'],
    [
      'runner with shell',
      { instrumentationRunner: 'com.callstack.agentdevice.snapshothelper/.Snap;reboot' },
      'instrumentationRunner',
      'component name',
    ],
    [
      'runner with $',
      { instrumentationRunner: 'com.callstack.agentdevice.snapshothelper/.Snap$Inner' },
      'instrumentationRunner',
      'component name',
    ],
    [
      'runner without slash',
      { instrumentationRunner: 'com.x.Runner' },
      'instrumentationRunner',
      'component name',
    ],
    [
      'runner of another package',
      { instrumentationRunner: 'com.evil/.Runner' },
      'instrumentationRunner',
      'must belong to packageName "com.callstack.agentdevice.snapshothelper"',
    ],
    ['apkUrl http remote', { apkUrl: 'http://example.com/h.apk' }, 'apkUrl', 'only on a loopback host'],
    ['apkUrl credentials', { apkUrl: 'https://u:p@example.com/h.apk' }, 'apkUrl', 'credentials'],
    ['apkUrl empty user', { apkUrl: 'https://@example.com/h.apk' }, 'apkUrl', 'credentials'],
    ['apkUrl ftp', { apkUrl: 'ftp://example.com/h.apk' }, 'apkUrl', 'must use https:'],
    ['apkUrl file', { apkUrl: 'file:///tmp/h.apk' }, 'apkUrl', 'must use https:'],
    ['apkUrl relative', { apkUrl: '/h.apk' }, 'apkUrl', 'absolute URL'],
    ['apkUrl space', { apkUrl: 'https://example.com/a b.apk' }, 'apkUrl', 'printable ASCII'],
    ['apkUrl newline', { apkUrl: 'https://example.com/h.apk\n' }, 'apkUrl', 'printable ASCII'],
    ['apkUrl empty', { apkUrl: '' }, 'apkUrl', 'use null'],
    ['apkUrl missing', { apkUrl: undefined }, 'apkUrl', 'is required (may be null)'],
    ['apkUrl localhost lookalike', { apkUrl: 'http://localhost.evil.com/h.apk' }, 'apkUrl', 'loopback'],
    ['sha256 63 hex', { sha256: HEX.slice(1) }, 'sha256', '64 hexadecimal'],
    ['sha256 non-hex', { sha256: `${HEX.slice(1)}g` }, 'sha256', '64 hexadecimal'],
    ['sha256 inner space', { sha256: `${HEX.slice(0, 32)} ${HEX.slice(32)}` }, 'sha256', '64 hexadecimal'],
    ['signingCertSha256 short', { signingCertSha256: 'ab' }, 'signingCertSha256', '64 hexadecimal'],
    ['minSdk > targetSdk', { minSdk: 30, targetSdk: 29 }, 'minSdk', 'must be <= targetSdk (30 > 29)'],
    ['minSdk 0', { minSdk: 0 }, 'minSdk', 'between 1 and 1000'],
    ['targetSdk 1001', { targetSdk: 1001 }, 'targetSdk', 'between 1 and 1000'],
    ['targetSdk string', { targetSdk: '36' }, 'targetSdk', 'not a string'],
    ['installArgs string', { installArgs: 'install -r -t' }, 'installArgs', 'array of strings'],
    [
      'installArgs dup',
      { installArgs: ['install', '-t', '-t'] },
      'installArgs.2',
      '"-t" appears more than once',
    ],
    ['installArgs first', { installArgs: ['-r'] }, 'installArgs.0', 'must be exactly "install"'],
    ['outputFormat wrong', { outputFormat: 'json' }, 'outputFormat', 'must be "uiautomator-xml"'],
    [
      'outputFormat missing',
      { outputFormat: undefined },
      'outputFormat',
      'is required for android-snapshot-helper',
    ],
    [
      'statusProtocol wrong',
      { statusProtocol: 'android-snapshot-helper-v2' },
      'statusProtocol',
      'must be "android-snapshot-helper-v1"',
    ],
    ['assetName with /', { assetName: '../h.apk' }, 'assetName', 'plain file name'],
    ['assetName with \\', { assetName: 'a\\h.apk' }, 'assetName', 'plain file name'],
    ['assetName with ..', { assetName: 'a..apk' }, 'assetName', 'plain file name'],
    ['assetName with NUL', { assetName: 'h\u0000.apk' }, 'assetName', 'plain file name'],
    ['assetName .zip', { assetName: 'h.zip' }, 'assetName', 'ending in ".apk" or ".jar"'],
    ['checksumName with /', { checksumName: 'x/h.sha256' }, 'checksumName', 'plain file name'],
    ['releaseTag with space', { releaseTag: 'v 1' }, 'releaseTag', 'token'],
    ['sizeBytes negative', { sizeBytes: -1 }, 'sizeBytes', 'between 0 and'],
    ['sizeBytes fraction', { sizeBytes: 10.5 }, 'sizeBytes', 'must be an integer'],
  ])('rejects %s', (_label, patch, path, message) => {
    expectOnly(patch, path, message);
    const input = { ...agentDevice(), ...patch };
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete input[k];
    expect(HelperManifestSchema.safeParse(input).success).toBe(false);
  });

  it.each<[string, Record<string, unknown>]>([
    ['null apkUrl (bundled)', { apkUrl: null }],
    ['http on 127.0.0.1', { apkUrl: 'http://127.0.0.1:7100/v1/artifacts/x' }],
    ['http on 127.8.9.10', { apkUrl: 'http://127.8.9.10/h.apk' }],
    ['http on localhost', { apkUrl: 'http://localhost:8080/h.apk' }],
    ['http on [::1]', { apkUrl: 'http://[::1]:8080/h.apk' }],
    ['full runner class', { instrumentationRunner: 'com.callstack.agentdevice.snapshothelper/com.x.Runner' }],
    ['sub-package runner', { instrumentationRunner: 'com.callstack.agentdevice.snapshothelper/.sub.Runner' }],
    ['a .jar asset', { assetName: 'agent.jar' }],
    ['sizeBytes 0', { sizeBytes: 0 }],
    ['minSdk == targetSdk', { minSdk: 36 }],
    ['versionCode max', { versionCode: 2 ** 31 - 1 }],
    ['all four flags', { installArgs: ['install', '-g', '-d', '-t', '-r'] }],
    ['only install', { installArgs: ['install'] }],
    ['prerelease version', { version: '1.0.0-rc.1+build.5' }],
  ])('accepts %s', (_label, patch) => {
    expectValid(patch);
    expect(HelperManifestSchema.safeParse({ ...agentDevice(), ...patch }).success).toBe(true);
  });

  it('lets other helpers omit outputFormat/statusProtocol, but checks them as tokens when present', () => {
    const other: Record<string, unknown> = { ...agentDevice(), name: 'glass-agent' };
    delete other['outputFormat'];
    delete other['statusProtocol'];
    expectValid({}, other);
    expectValid({ outputFormat: 'json-lines', statusProtocol: 'glass-v1' }, other);
    expect(errorsOf({ outputFormat: 'json lines;rm' }, other)).toEqual([
      { path: 'outputFormat', message: expect.stringContaining('must be a token') },
    ]);
  });
});

describe('semver', () => {
  it.each([
    '0.0.0',
    '1.2.3',
    '0.13.3',
    '1.0.0-alpha',
    '1.0.0-0.3.7',
    '1.0.0-x.7.z.92',
    '1.0.0+20130313144700',
  ])('accepts %s', (v) => expect(isSemver(v)).toBe(true));

  it.each([
    '',
    'v1.2.3',
    '1.2',
    '1.2.3.4',
    '01.2.3',
    '1.2.3-',
    '1.2.3+',
    '1.2.3-01',
    '1.2.3 ',
    '１.2.3',
    '1.2.3-a..b',
  ])('rejects %j', (v) => expect(isSemver(v)).toBe(false));

  it('orders the semver.org precedence example', () => {
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.1.0',
      '2.0.0',
      '10.0.0',
    ];
    for (let i = 0; i < ordered.length - 1; i += 1) {
      expect(compareSemver(ordered[i] as string, ordered[i + 1] as string)).toBe(-1);
      expect(compareSemver(ordered[i + 1] as string, ordered[i] as string)).toBe(1);
    }
    expect([...ordered].reverse().sort(compareSemver)).toEqual(ordered);
  });

  it('ignores build metadata and handles numbers beyond 2^53', () => {
    expect(compareSemver('1.0.0+a', '1.0.0+b')).toBe(0);
    expect(compareSemver('9007199254740993.0.0', '9007199254740992.0.0')).toBe(1);
    expect(parseSemver('1.2.3-rc.1+b.2')).toEqual({
      major: '1',
      minor: '2',
      patch: '3',
      prerelease: ['rc', '1'],
      build: ['b', '2'],
    });
  });

  it('throws INVALID_ARGUMENT on a non-semver operand', () => {
    expect(() => compareSemver('1.0', '1.0.0')).toThrowError(BridgeError);
  });
});

describe('Java names', () => {
  it.each([
    ['com.callstack.agentdevice.snapshothelper', true],
    ['a.b', true],
    ['_x.y_1', true],
    ['single', false],
    ['com..x', false],
    ['com.x.', false],
    ['com.int', false],
    ['com.x-y', false],
    ['com.x y', false],
    ['com.\u0445', false],
  ])('isJavaPackageName(%j) is %s', (s, ok) => expect(isJavaPackageName(s)).toBe(ok));

  it.each([
    ['com.a/.Runner', true],
    ['com.a/.sub.Runner', true],
    ['com.a/com.b.Runner', true],
    ['com.a/Runner', false],
    ['com.a/.', false],
    ['com.a//.Runner', false],
    ['com.a/.Runner/x', false],
    ['com.a/.Run ner', false],
    ['com.a/.Runner;id', false],
    ['com.a/.Runner`id`', false],
    ['/.Runner', false],
  ])('isJavaComponent(%j) is %s', (s, ok) => expect(isJavaComponent(s)).toBe(ok));

  it('resolves relative and full component classes', () => {
    expect(resolveComponent('com.callstack.agentdevice.snapshothelper/.SnapshotInstrumentation')).toEqual({
      packageName: 'com.callstack.agentdevice.snapshothelper',
      className: 'com.callstack.agentdevice.snapshothelper.SnapshotInstrumentation',
    });
    expect(resolveComponent('com.a/com.b.Runner')).toEqual({
      packageName: 'com.a',
      className: 'com.b.Runner',
    });
    expect(() => resolveComponent('com.a/.Runner;id')).toThrowError(BridgeError);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Properties

const identifier = fc.stringMatching(/^(?:0|[1-9]\d{0,2}|[a-z-][a-z0-9-]{0,3})$/);
const semverArb = fc
  .record({
    core: fc.tuple(fc.nat(3), fc.nat(3), fc.nat(3)),
    pre: fc.array(fc.oneof(fc.constantFrom('alpha', 'beta', 'rc', '0', '1', '2', '11'), identifier), {
      maxLength: 3,
    }),
    build: fc.option(fc.constantFrom('b1', '20240101', 'x.y'), { nil: undefined }),
  })
  .map(
    ({ core, pre, build }) =>
      `${core.join('.')}${pre.length > 0 ? `-${pre.join('.')}` : ''}${build === undefined ? '' : `+${build}`}`,
  );

const hex64 = fc
  .array(fc.constantFrom(...'0123456789abcdefABCDEF'), { minLength: 64, maxLength: 64 })
  .map((a) => a.join(''));
const padding = fc
  .array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\ufeff'), { maxLength: 3 })
  .map((a) => a.join(''));

describe('properties', () => {
  it('normalizeSha256 is idempotent and yields canonical digests', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.tuple(padding, hex64, padding).map((p) => p.join('')),
        ),
        (s) => {
          const n = normalizeSha256(s);
          if (n === null) return;
          expect(SHA256_RE.test(n)).toBe(true);
          expect(normalizeSha256(n)).toBe(n);
          expect(n).toBe(s.trim().toLowerCase());
        },
      ),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(padding, hex64, padding, (a, h, b) => {
        expect(normalizeSha256(a + h + b)).toBe(h.toLowerCase());
      }),
    );
  });

  it('generated versions are semver and compareSemver is antisymmetric and transitive', () => {
    fc.assert(
      fc.property(semverArb, semverArb, semverArb, (a, b, c) => {
        expect(isSemver(a) && SEMVER_RE.test(b) && isSemver(c)).toBe(true);
        expect(compareSemver(a, a)).toBe(0);
        expect(compareSemver(a, b)).toBe(-compareSemver(b, a) || 0);
        if (compareSemver(a, b) <= 0 && compareSemver(b, c) <= 0)
          expect(compareSemver(a, c)).toBeLessThanOrEqual(0);
        if (compareSemver(a, b) === 0 && compareSemver(b, c) === 0) expect(compareSemver(a, c)).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('generated helper names match HELPER_NAME_RE iff accepted as name (one rule: no ".." either)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9._-]{1,66}$/), (name) => {
        const ok = HELPER_NAME_RE.test(name);
        if (name.includes('..')) expect(ok).toBe(false);
        expect(validateManifest({ ...agentDevice(), name: name }).errors.some((e) => e.path === 'name')).toBe(
          !ok,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('validateManifest never throws on arbitrary JSON and its verdict is consistent', () => {
    const base = agentDevice();
    const keys = [...KNOWN_MANIFEST_FIELDS, 'extra'];
    const doc = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 2 })),
      fc
        .dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 2 }))
        .map((patch) => ({ ...base, ...patch })),
    );
    fc.assert(
      fc.property(doc, (input) => {
        const result = validateManifest(input);
        expect(result.valid).toBe(result.errors.length === 0);
        expect(result.manifest === null).toBe(!result.valid);
        for (const e of result.errors) {
          expect(e.path === '' || KNOWN_MANIFEST_FIELDS.includes(e.path.split('.')[0] as string)).toBe(true);
          expect(typeof e.message).toBe('string');
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('HelperManifestSchema and validateManifest reach the same verdict', () => {
    const base = agentDevice();
    const interesting = fc.oneof(
      fc.jsonValue({ maxDepth: 1 }),
      fc.constantFrom(
        undefined,
        null,
        '13003',
        1.5,
        0,
        1,
        23,
        36,
        1001,
        2 ** 31,
        'android-snapshot-helper',
        'glass-agent',
        'uiautomator-xml',
        'android-snapshot-helper-v1',
        'https://example.com/h.apk',
        'http://127.0.0.1/h.apk',
        'http://example.com/h.apk',
        HEX,
        ` ${HEX.toUpperCase()} `,
        ['install', '-r', '-t'],
        ['install', '-r', '-r'],
        ['install', '--user'],
        'com.x.y',
        'com.callstack.agentdevice.snapshothelper/.R',
        'com.x.y/.R',
        'h.apk',
        '1.0.0-rc.1',
      ),
    );
    const mutation = fc.dictionary(fc.constantFrom(...KNOWN_MANIFEST_FIELDS), interesting, { maxKeys: 3 });
    fc.assert(
      fc.property(mutation, (patch) => {
        const input: Record<string, unknown> = { ...base, ...patch };
        for (const [k, v] of Object.entries(patch)) if (v === undefined) delete input[k];
        expect(HelperManifestSchema.safeParse(input).success).toBe(validateManifest(input).valid);
      }),
      { numRuns: 1500 },
    );
  });

  it('dropping any required field is reported at that field', () => {
    const required = ['name', 'version', 'apkUrl', 'sha256', 'packageName', 'versionCode'];
    required.push(
      'instrumentationRunner',
      'minSdk',
      'targetSdk',
      'installArgs',
      'outputFormat',
      'statusProtocol',
    );
    fc.assert(
      fc.property(fc.subarray(required, { minLength: 1 }), (drop) => {
        const input = agentDevice();
        for (const k of drop) delete input[k];
        const paths = validateManifest(input).errors.map((e) => e.path);
        // outputFormat/statusProtocol are required only of the snapshot helper, i.e. while name stays.
        const snapshotOnly = ['outputFormat', 'statusProtocol'];
        for (const k of drop)
          if (!drop.includes('name') || !snapshotOnly.includes(k)) expect(paths).toContain(k);
      }),
      { numRuns: 200 },
    );
  });
});
