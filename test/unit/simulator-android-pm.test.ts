import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid, type SimAndroidHandle } from '../../src/simulator/android/index.ts';

interface FixtureMeta {
  file: string;
  packageName: string;
  versionCode: number;
  versionName: string;
  minSdk: number;
  targetSdk: number;
  signerSha256: string | null;
  sha256: string;
}

const fixturesDir = new URL('../fixtures/apk/', import.meta.url);
const meta = (
  JSON.parse(readFileSync(new URL('FIXTURES.json', fixturesDir), 'utf8')) as { fixtures: FixtureMeta[] }
).fixtures;
const info = (file: string): FixtureMeta => {
  const found = meta.find((f) => f.file === file);
  if (found === undefined) throw new Error(`no fixture ${file}`);
  return found;
};
const HELPER = 'com.callstack.agentdevice.snapshothelper';

function sim(): SimAndroidHandle {
  return createSimAndroid({ serial: 'pm-test', seed: 5 });
}

/** Push a fixture into /data/local/tmp (as adb sync would) and `pm install` it with `args`. */
async function pmInstall(android: SimAndroidHandle, file: string, args = '-r -t') {
  const bytes = new Uint8Array(readFileSync(new URL(file, fixturesDir)));
  android.fs.writeFile(`/data/local/tmp/${file}`, bytes);
  return runCaptured(android, `pm install ${args} /data/local/tmp/${file}`);
}

describe('package manager installs', () => {
  it('installs a fixture and records its real metadata', async () => {
    const android = sim();
    expect(await pmInstall(android, 'snapshot-helper-v1.apk')).toMatchObject({
      status: 0,
      stdout: 'Success\n',
    });
    const pkg = android.device.findPackage(HELPER);
    const v1 = info('snapshot-helper-v1.apk');
    expect(pkg).toMatchObject({
      packageName: HELPER,
      versionCode: 1,
      versionName: '0.1.0',
      sha256: v1.sha256,
      testOnly: true,
      signerSha256: v1.signerSha256,
      instrumentations: [{ name: `${HELPER}.SnapshotInstrumentation`, targetPackage: HELPER }],
    });
    expect(pkg?.apkPath).toMatch(
      new RegExp(`^/data/app/~~[A-Za-z0-9_-]{22}==/${HELPER}-[A-Za-z0-9_-]{22}==/base\\.apk$`),
    );
    expect(android.device.findInstrumentation(`${HELPER}/.SnapshotInstrumentation`)?.pkg.packageName).toBe(
      HELPER,
    );
    expect(android.device.findInstrumentation(`${HELPER}/${HELPER}.SnapshotInstrumentation`)).toBeDefined();
    expect(android.device.findInstrumentation(`${HELPER}/.Other`)).toBeUndefined();
  });

  it('pm path + sha256sum of the installed APK matches the fixture sha256', async () => {
    const android = sim();
    await pmInstall(android, 'snapshot-helper-v2.apk');
    const path = (await runCaptured(android, `pm path ${HELPER}`)).stdout;
    expect(path).toMatch(/^package:\/data\/app\/.+\/base\.apk\n$/);
    const apk = path.trim().slice('package:'.length);
    expect((await runCaptured(android, `sha256sum ${apk}`)).stdout).toBe(
      `${info('snapshot-helper-v2.apk').sha256}  ${apk}\n`,
    );
    expect(android.fs.stat(apk)).toMatchObject({ type: 'file', size: 8476, mode: 0o100644 });
  });

  it('upgrades in place, keeping one code path', async () => {
    const android = sim();
    await pmInstall(android, 'snapshot-helper-v1.apk');
    const oldPath = android.device.findPackage(HELPER)?.apkPath as string;
    expect(await pmInstall(android, 'snapshot-helper-v2.apk')).toMatchObject({
      status: 0,
      stdout: 'Success\n',
    });
    const pkg = android.device.findPackage(HELPER);
    expect(pkg?.versionCode).toBe(2);
    expect(pkg?.apkPath).not.toBe(oldPath);
    expect(android.fs.stat(oldPath)).toBeUndefined();
    expect((await runCaptured(android, `pm list packages --show-versioncode ${HELPER}`)).stdout).toBe(
      `package:${HELPER} versionCode:2\n`,
    );
  });

  it('refuses a downgrade without -d and accepts it with -d', async () => {
    const android = sim();
    await pmInstall(android, 'snapshot-helper-v2.apk');
    expect(await pmInstall(android, 'snapshot-helper-v1.apk', '-r -t')).toMatchObject({
      status: 1,
      stdout:
        'Failure [INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected: Update version code 1 is older than current 2]\n',
    });
    expect(android.device.findPackage(HELPER)?.versionCode).toBe(2);
    expect(await pmInstall(android, 'snapshot-helper-v1.apk', '-r -t -d')).toMatchObject({
      status: 0,
      stdout: 'Success\n',
    });
    expect(android.device.findPackage(HELPER)?.versionCode).toBe(1);
  });

  it('refuses an update signed by a different key', async () => {
    const android = sim();
    await pmInstall(android, 'snapshot-helper-v1.apk');
    expect(await pmInstall(android, 'snapshot-helper-v2-keyb.apk')).toMatchObject({
      status: 1,
      stdout: `Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package ${HELPER} signatures do not match newer version; ignoring!]\n`,
    });
    expect(android.device.findPackage(HELPER)?.signerSha256).toBe(
      info('snapshot-helper-v1.apk').signerSha256,
    );
  });

  it('refuses a test-only APK without -t', async () => {
    const android = sim();
    expect(await pmInstall(android, 'snapshot-helper-v1.apk', '-r')).toMatchObject({
      status: 1,
      stdout: 'Failure [INSTALL_FAILED_TEST_ONLY: installPackageLI]\n',
    });
    expect(android.device.findPackage(HELPER)).toBeUndefined();
  });

  it('reinstalls the same version with different bytes (rebuilt) and updates the sha256', async () => {
    const android = sim();
    await pmInstall(android, 'snapshot-helper-v1.apk');
    expect((await pmInstall(android, 'snapshot-helper-v1-rebuilt.apk')).stdout).toBe('Success\n');
    expect(android.device.findPackage(HELPER)?.sha256).toBe(info('snapshot-helper-v1-rebuilt.apk').sha256);
  });

  it('-r is the default since Android 7; -R refuses replacement; SDK < 24 needs -r', async () => {
    const android = sim();
    await pmInstall(android, 'plain-app.apk', '');
    expect((await pmInstall(android, 'plain-app.apk', '')).stdout).toBe('Success\n');
    expect(await pmInstall(android, 'plain-app.apk', '-R')).toMatchObject({
      status: 1,
      stdout:
        'Failure [INSTALL_FAILED_ALREADY_EXISTS: Attempt to re-install com.devicebridge.fixture.plain without first uninstalling.]\n',
    });
    const old = createSimAndroid({ serial: 'old', props: { 'ro.build.version.sdk': '23' } });
    await pmInstall(old, 'plain-app.apk', '');
    expect((await pmInstall(old, 'plain-app.apk', '')).stdout).toMatch(
      /^Failure \[INSTALL_FAILED_ALREADY_EXISTS: /,
    );
    expect((await pmInstall(old, 'plain-app.apk', '-r')).stdout).toBe('Success\n');
  });

  it('refuses garbage, unsigned APKs and too-new minSdk', async () => {
    const android = sim();
    android.fs.writeFile('/data/local/tmp/junk.apk', new TextEncoder().encode('not a zip'));
    const junk = await runCaptured(android, 'pm install -r -t /data/local/tmp/junk.apk');
    expect(junk.status).toBe(1);
    expect(junk.stdout).toMatch(
      /^Failure \[INSTALL_PARSE_FAILED_NOT_APK: Failed to parse \/data\/app\/vmdl\d+\.tmp\/base\.apk/,
    );
    expect((await pmInstall(android, 'plain-app-unsigned.apk')).stdout).toMatch(
      /^Failure \[INSTALL_PARSE_FAILED_NO_CERTIFICATES: /,
    );
    const old = createSimAndroid({ serial: 'old', props: { 'ro.build.version.sdk': '21' } });
    expect((await pmInstall(old, 'snapshot-helper-v1.apk')).stdout).toMatch(
      /^Failure \[INSTALL_FAILED_OLDER_SDK: .*Requires newer sdk version #23 \(current version is #21\)\]\n$/,
    );
  });

  it('faults.installFailure forces the failure code', async () => {
    const android = sim();
    android.device.faults.installFailure = 'INSTALL_FAILED_INSUFFICIENT_STORAGE';
    expect(await pmInstall(android, 'plain-app.apk')).toMatchObject({
      status: 1,
      stdout: 'Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE]\n',
    });
    delete android.device.faults.installFailure;
    expect((await pmInstall(android, 'plain-app.apk')).stdout).toBe('Success\n');
  });
});

describe('uninstall and queries', () => {
  it('uninstalls installed packages and refuses unknown or system ones', async () => {
    const android = sim();
    await pmInstall(android, 'plain-app.apk');
    const apk = android.device.findPackage('com.devicebridge.fixture.plain')?.apkPath as string;
    expect(await runCaptured(android, 'pm uninstall com.devicebridge.fixture.plain')).toMatchObject({
      status: 0,
      stdout: 'Success\n',
    });
    expect(android.fs.stat(apk)).toBeUndefined();
    expect(await runCaptured(android, 'pm uninstall com.devicebridge.fixture.plain')).toMatchObject({
      status: 1,
      stdout: 'Failure [DELETE_FAILED_INTERNAL_ERROR]\n',
    });
    expect((await runCaptured(android, 'pm uninstall com.android.settings')).stdout).toBe(
      'Failure [DELETE_FAILED_INTERNAL_ERROR]\n',
    );
    expect((await runCaptured(android, 'pm path com.devicebridge.fixture.plain')).status).toBe(1);
  });

  it('dumpsys package prints the version lines in the real layout', async () => {
    const android = sim();
    await pmInstall(android, 'snapshot-helper-v2.apk');
    const { stdout } = await runCaptured(android, `dumpsys package ${HELPER}`);
    expect(stdout).toMatch(
      new RegExp(`\\n  Package \\[${HELPER.replaceAll('.', '\\.')}\\] \\([0-9a-f]{7}\\):\\n`),
    );
    expect(stdout).toContain('\n    versionCode=2 minSdk=23 targetSdk=29\n');
    expect(stdout).toContain('\n    versionName=0.2.0\n');
    expect(stdout).toMatch(/\n {4}flags=\[ .*TEST_ONLY.* \]\n/);
    expect((await runCaptured(android, `dumpsys package ${HELPER} | grep versionName`)).stdout).toBe(
      '    versionName=0.2.0\n',
    );
  });

  it('lists third-party packages, instrumentation and -f paths', async () => {
    const android = sim();
    await pmInstall(android, 'snapshot-helper-v1.apk');
    await pmInstall(android, 'plain-app.apk');
    expect((await runCaptured(android, 'pm list packages -3 --show-versioncode')).stdout).toBe(
      `package:${HELPER} versionCode:1\npackage:com.devicebridge.fixture.plain versionCode:7\n`,
    );
    expect((await runCaptured(android, 'pm list instrumentation')).stdout).toBe(
      `instrumentation:${HELPER}/.SnapshotInstrumentation (target=${HELPER})\n`,
    );
    const path = android.device.findPackage('com.devicebridge.fixture.plain')?.apkPath;
    expect((await runCaptured(android, 'pm list packages -f plain')).stdout).toBe(
      `package:${path}=com.devicebridge.fixture.plain\n`,
    );
  });
});
