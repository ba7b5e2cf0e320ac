import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  HelperManifestSchema,
  isDeviceJarPath,
  isSocketName,
  validateManifest,
  validateReleaseManifest,
} from '../../src/manifest/index.ts';

const FIXTURE = new URL('../fixtures/manifests/agent-device-0.13.3.json', import.meta.url);
const agentDevice = (): Record<string, unknown> => JSON.parse(readFileSync(FIXTURE, 'utf8'));
const HEX = 'ab'.repeat(32);

const jar = (): Record<string, unknown> => ({
  kind: 'app-process-jar',
  name: 'glass-agent',
  version: '1.0.0',
  apkUrl: null,
  sha256: HEX.toUpperCase(),
  assetName: 'glass-agent-1.0.0.jar',
  mainClass: 'dev.devicebridge.glassagent.Main',
  socketName: 'glass-agent',
  devicePath: '/data/local/tmp/glass-agent-1.0.0.jar',
});

const a11y = (): Record<string, unknown> => ({
  kind: 'accessibility-service-apk',
  name: 'glass-a11y',
  version: '1.0.0',
  apkUrl: 'https://example.com/glass-a11y-1.0.0.apk',
  sha256: HEX,
  packageName: 'dev.devicebridge.glassa11y',
  versionCode: 1_000_000,
  minSdk: 23,
  targetSdk: 35,
  installArgs: ['install', '-r', '-g'],
  serviceComponent: 'dev.devicebridge.glassa11y/.GlassAccessibilityService',
  socketName: 'glass-a11y',
});

const paths = (input: unknown): string[] => validateReleaseManifest(input).errors.map((e) => e.path);

describe('manifest kind', () => {
  it('absent kind is an instrumentation APK: agent-device manifests stay valid both ways', () => {
    const m = agentDevice();
    expect(validateManifest(m).valid).toBe(true);
    expect(validateReleaseManifest(m)).toMatchObject({ valid: true, manifest: { name: m['name'] } });
    expect(validateReleaseManifest({ ...m, kind: 'instrumentation-apk' }).valid).toBe(true);
    expect(HelperManifestSchema.safeParse({ ...m, kind: 'instrumentation-apk' }).success).toBe(true);
  });

  it('validateManifest (the instrumentation consumers) refuses the other kinds, naming kind', () => {
    const errors = validateManifest({ ...agentDevice(), kind: 'app-process-jar' }).errors;
    expect(errors).toEqual([
      { path: 'kind', message: expect.stringContaining('needs an "instrumentation-apk" manifest') },
    ]);
    expect(validateManifest({ ...agentDevice(), kind: 'apk' }).errors[0]?.message).toContain(
      'must be one of',
    );
    expect(HelperManifestSchema.safeParse({ ...agentDevice(), kind: 'app-process-jar' }).success).toBe(false);
    expect(paths({ ...agentDevice(), kind: 7 })).toEqual(['kind']);
  });

  it('app-process-jar: valid, sha256 normalised, unknown fields kept', () => {
    const result = validateReleaseManifest({ ...jar(), futureField: 1 });
    expect(result.errors).toEqual([]);
    expect(result.manifest).toMatchObject({ kind: 'app-process-jar', sha256: HEX, futureField: 1 });
  });

  it('app-process-jar: rules, and nothing that would make a consumer install it', () => {
    expect(paths({ ...jar(), mainClass: 'Main' })).toEqual(['mainClass']);
    expect(paths({ ...jar(), socketName: 'Glass Agent' })).toEqual(['socketName']);
    expect(paths({ ...jar(), devicePath: '/sdcard/agent.jar' })).toEqual(['devicePath']);
    expect(paths({ ...jar(), devicePath: '/data/local/tmp/../x.jar' })).toEqual(['devicePath']);
    expect(paths({ ...jar(), assetName: 'glass-agent.apk' })).toEqual(['assetName']);
    expect(paths({ ...jar(), installArgs: ['install'], instrumentationRunner: 'a.b/.C' })).toEqual([
      'installArgs',
      'instrumentationRunner',
    ]);
    const { mainClass: _m, socketName: _s, devicePath: _d, ...bare } = jar();
    expect(paths(bare).sort()).toEqual(['devicePath', 'mainClass', 'socketName']);
  });

  it('accessibility-service-apk: valid; installArgs allowlist; service in its own package; no runner', () => {
    expect(validateReleaseManifest(a11y()).errors).toEqual([]);
    expect(paths({ ...a11y(), installArgs: ['install', '--user', '0'] })).toEqual([
      'installArgs.1',
      'installArgs.2',
    ]);
    expect(paths({ ...a11y(), serviceComponent: 'com.other/.Service' })).toEqual(['serviceComponent']);
    expect(paths({ ...a11y(), instrumentationRunner: 'dev.devicebridge.glassa11y/.X' })).toEqual([
      'instrumentationRunner',
    ]);
    expect(paths({ ...a11y(), minSdk: 36 })).toEqual(['minSdk']);
    expect(paths({ ...a11y(), apkUrl: 'http://example.com/x.apk' })).toEqual(['apkUrl']);
  });

  it('socket names and device jar paths', () => {
    expect(isSocketName('glass-a11y')).toBe(true);
    expect(isSocketName('a..b')).toBe(false);
    expect(isSocketName('x'.repeat(65))).toBe(false);
    expect(isDeviceJarPath('/data/local/tmp/a.jar')).toBe(true);
    expect(isDeviceJarPath('/data/local/tmp/sub/a.jar')).toBe(false);
    expect(isDeviceJarPath('/data/local/tmp/a.jar\0')).toBe(false);
  });

  it('never throws on arbitrary documents; verdict and manifest agree; error paths are fields', () => {
    const keys = [
      'kind',
      'name',
      'version',
      'apkUrl',
      'sha256',
      'mainClass',
      'socketName',
      'devicePath',
      'installArgs',
      'packageName',
      'serviceComponent',
      'minSdk',
      'targetSdk',
      'versionCode',
      'extra',
    ];
    const kindValue = fc.oneof(
      fc.constantFrom('app-process-jar', 'accessibility-service-apk', 'instrumentation-apk', undefined),
      fc.jsonValue({ maxDepth: 1 }),
    );
    const doc = fc.oneof(
      fc.jsonValue(),
      fc
        .tuple(
          fc.constantFrom(jar(), a11y(), agentDevice()),
          fc.dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 2 })),
          kindValue,
        )
        .map(([base, patch, kind]) => ({ ...base, ...patch, ...(kind === undefined ? {} : { kind }) })),
    );
    fc.assert(
      fc.property(doc, (input) => {
        const result = validateReleaseManifest(input);
        expect(result.valid).toBe(result.errors.length === 0);
        expect(result.manifest === null).toBe(!result.valid);
        for (const e of result.errors)
          expect(typeof e.path === 'string' && typeof e.message === 'string').toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
