import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSignerPin } from '../../src/helpers/apk-source.ts';
import { validateManifest } from '../../src/manifest/index.ts';
import { FIXTURES } from '../support/bridge.ts';

const fixtures = JSON.parse(readFileSync(path.join(FIXTURES, 'FIXTURES.json'), 'utf8')).fixtures as Array<{
  file: string;
  signerSha256: string;
  sha256: string;
}>;
const keyA = fixtures.find((f) => f.file === 'snapshot-helper-v1.apk')!.signerSha256;
const keyB = fixtures.find((f) => f.file === 'snapshot-helper-v2-keyb.apk')!.signerSha256;

function manifest(pin?: string) {
  const v = validateManifest({
    name: 'android-snapshot-helper',
    version: '0.1.0',
    apkUrl: null,
    sha256: fixtures[0]!.sha256,
    packageName: 'com.callstack.agentdevice.snapshothelper',
    versionCode: 1,
    instrumentationRunner: 'com.callstack.agentdevice.snapshothelper/.SnapshotInstrumentation',
    minSdk: 23,
    targetSdk: 29,
    outputFormat: 'uiautomator-xml',
    statusProtocol: 'android-snapshot-helper-v1',
    installArgs: ['install', '-r', '-t'],
    ...(pin ? { signingCertSha256: pin } : {}),
  });
  if (!v.valid) throw new Error(JSON.stringify(v.errors));
  return v.manifest;
}

describe('signer pin', () => {
  const apk = path.join(FIXTURES, 'snapshot-helper-v1.apk');

  it('accepts the pinned signer and manifests without a pin', async () => {
    await expect(checkSignerPin(apk, manifest(keyA))).resolves.toBeUndefined();
    await expect(checkSignerPin(apk, manifest())).resolves.toBeUndefined();
  });

  it('refuses an APK that is not signed by the pinned certificate', async () => {
    expect(keyA).not.toBe(keyB);
    await expect(checkSignerPin(apk, manifest(keyB))).rejects.toMatchObject({
      code: 'CHECKSUM_MISMATCH',
      details: { signingCertSha256: keyB, actual: [keyA] },
    });
    const unsigned = path.join(FIXTURES, 'plain-app-unsigned.apk');
    await expect(checkSignerPin(unsigned, manifest(keyA))).rejects.toMatchObject({
      code: 'CHECKSUM_MISMATCH',
    });
  });
});
