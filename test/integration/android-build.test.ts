/**
 * release/build-android.sh: signed, aligned, verified, deterministic artifacts, checked with the
 * Android tools CI has (aapt, apksigner, zipalign, dexdump) and with our own APK reader.
 */
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readApkInfo } from '../../src/artifacts/apk-file.ts';
import { parseDexJar } from '../../src/protocol/apk/dex.ts';
import {
  ANDROID_VERSION,
  ANDROID_VERSION_CODE,
  buildAndroid,
  builtAndroid,
  DEBUG_CERT_SHA256,
  run,
} from '../support/android.ts';

const HELPER = `snapshot-helper-${ANDROID_VERSION}.apk`;
const AGENT = `glass-agent-${ANDROID_VERSION}.jar`;
const A11Y = `glass-a11y-${ANDROID_VERSION}.apk`;
const ARTIFACTS = [HELPER, AGENT, A11Y];
/** android/glass-common: compiled into both glass artifacts. */
const GLASS_COMMON = [
  'dev/devicebridge/glass/common/JsonLineProtocol',
  'dev/devicebridge/glass/common/LineServer',
  'dev/devicebridge/glass/common/AcceptLoop',
  'dev/devicebridge/glass/common/LocalSocketListener',
];
/** The superclass dexdump names for `cls` (slash-separated), or undefined when the class is missing. */
function superclassOf(dump: string, cls: string): string | undefined {
  const escaped = cls.replace(/[/$]/g, (c) => `\\${c}`);
  return new RegExp(
    `Class descriptor\\s*: 'L${escaped};'\\s*\\n\\s*Access flags[^\\n]*\\n\\s*Superclass\\s*: 'L([^;]+);'`,
  ).exec(dump)?.[1];
}
let first: string;
let second: string;
let scratch: string;

const sha256 = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'android-build-'));
  // The shared build (maybe cached by an earlier file or run) and a fresh one must be identical.
  first = await builtAndroid();
  second = path.join(scratch, 'second');
  await buildAndroid(second);
}, 900_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('build-android.sh', () => {
  it('is deterministic: two builds of the same tree give the same bytes', async () => {
    for (const file of ARTIFACTS) {
      const a = await sha256(path.join(first, file));
      expect(a).toMatch(/^[0-9a-f]{64}$/);
      expect(await sha256(path.join(second, file)), file).toBe(a);
    }
  });

  it('writes <file>.sha256 in sha256sum format', async () => {
    for (const file of ARTIFACTS) {
      const line = await readFile(path.join(first, `${file}.sha256`), 'utf8');
      expect(line).toBe(`${await sha256(path.join(first, file))}  ${file}\n`);
    }
  });

  it('snapshot helper: aapt badging and manifest say package, versions, SDKs and the instrumentation', async () => {
    const apk = path.join(first, HELPER);
    const badging = await run('aapt', ['dump', 'badging', apk]);
    expect(badging.code).toBe(0);
    expect(badging.stdout).toContain(
      `package: name='dev.devicebridge.snapshothelper' versionCode='${ANDROID_VERSION_CODE}' versionName='${ANDROID_VERSION}'`,
    );
    expect(badging.stdout).toMatch(/^sdkVersion:'23'$/m);
    const target = Number(/^targetSdkVersion:'(\d+)'$/m.exec(badging.stdout)?.[1]);
    expect(target).toBeGreaterThanOrEqual(34);
    expect(badging.stdout).toMatch(/^testOnly='-1'$/m);
    const tree = await run('aapt', ['dump', 'xmltree', apk, 'AndroidManifest.xml']);
    expect(tree.stdout).toMatch(
      /E: instrumentation[\s\S]*android:name\(0x01010003\)="\.SnapshotInstrumentation"/,
    );
    const info = await readApkInfo(apk);
    expect(info.packageName).toBe('dev.devicebridge.snapshothelper');
    expect(info.versionCode).toBe(ANDROID_VERSION_CODE);
    expect(info.instrumentations).toEqual([
      {
        name: 'dev.devicebridge.snapshothelper.SnapshotInstrumentation',
        targetPackage: 'dev.devicebridge.snapshothelper',
      },
    ]);
    expect(info.signerCertSha256).toEqual([DEBUG_CERT_SHA256]);
  });

  it('snapshot helper: apksigner verifies it, signed by the committed debug key', async () => {
    const verify = await run('apksigner', ['verify', '--print-certs', '-v', path.join(first, HELPER)]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^Verified using v2 scheme \(APK Signature Scheme v2\): true$/m);
    expect(verify.stdout).toContain(`Signer #1 certificate SHA-256 digest: ${DEBUG_CERT_SHA256}`);
  });

  it('snapshot helper: zipalign -c -p 4 accepts it', async () => {
    const check = await run('zipalign', ['-c', '-p', '4', path.join(first, HELPER)]);
    expect(check.code).toBe(0);
  });

  it('snapshot helper: classes.dex holds the instrumentation and the core with their superclasses', async () => {
    const dump = await run('dexdump', [path.join(first, HELPER)]);
    expect(dump.code).toBe(0);
    const superOf = new Map<string, string>();
    for (const m of dump.stdout.matchAll(
      /Class descriptor\s*: '([^']+)'\s*\n\s*Access flags[^\n]*\n\s*Superclass\s*: '([^']+)'/g,
    )) {
      superOf.set(m[1] as string, m[2] as string);
    }
    expect(superOf.get('Ldev/devicebridge/snapshothelper/SnapshotInstrumentation;')).toBe(
      'Landroid/app/Instrumentation;',
    );
    expect(superOf.get('Ldev/devicebridge/snapshothelper/core/HelperCore;')).toBe('Ljava/lang/Object;');
    expect(superOf.get('Ldev/devicebridge/snapshothelper/core/UiXmlWriter;')).toBe('Ljava/lang/Object;');
    expect(superOf.get('Ldev/devicebridge/snapshothelper/core/HelperFailure;')).toBe('Ljava/lang/Exception;');
    // Test code never reaches the APK.
    expect([...superOf.keys()].some((c) => c.includes('Test;') || c.includes('Fake'))).toBe(false);
  });
});

describe('glass agent jar', () => {
  it('is classes.dex alone, with Main (a static main(String[])) and the protocol core', async () => {
    const list = await run('unzip', ['-Z1', path.join(first, AGENT)]);
    expect(list.stdout.trim().split('\n')).toEqual(['classes.dex']);
    const dump = await run('dexdump', [path.join(first, AGENT)]);
    expect(dump.code).toBe(0);
    const main = /Class descriptor\s*: 'Ldev\/devicebridge\/glassagent\/Main;'[\s\S]*?(?=Class #|$)/.exec(
      dump.stdout,
    )?.[0];
    expect(main).toBeDefined();
    expect(main).toMatch(/Superclass\s*: 'Ljava\/lang\/Object;'/);
    expect(main).toMatch(
      /name\s*: 'main'\s*\n\s*type\s*: '\(\[Ljava\/lang\/String;\)V'\s*\n\s*access\s*: 0x0009 \(PUBLIC STATIC\)/,
    );
    expect(superclassOf(dump.stdout, 'dev/devicebridge/glassagent/core/AgentProtocol')).toBe(
      'dev/devicebridge/glass/common/JsonLineProtocol',
    );
    for (const shared of GLASS_COMMON) expect(dump.stdout).toContain(`'L${shared};'`);
    expect(dump.stdout).not.toMatch(/Test;'|Recording/);
  });

  it('has the encoder mode, ScreenMain (a static main(String[])), with its framing core', async () => {
    const dump = await run('dexdump', [path.join(first, AGENT)]);
    expect(dump.code).toBe(0);
    const screen =
      /Class descriptor\s*: 'Ldev\/devicebridge\/glassagent\/ScreenMain;'[\s\S]*?(?=Class #|$)/.exec(
        dump.stdout,
      )?.[0];
    expect(screen).toBeDefined();
    expect(screen).toMatch(
      /name\s*: 'main'\s*\n\s*type\s*: '\(\[Ljava\/lang\/String;\)V'\s*\n\s*access\s*: 0x0009 \(PUBLIC STATIC\)/,
    );
    for (const cls of ['core/ScreenFraming', 'core/ScreenOptions', 'ScreenStreamer', 'DisplayMirror']) {
      expect(dump.stdout).toContain(`'Ldev/devicebridge/glassagent/${cls};'`);
    }
    // The framework fakes never reach the jar.
    expect(dump.stdout).not.toMatch(/Ldev\/devicebridge\/fakes\/|FakeMedia|FakeDisplays/);
  });

  it('our dex reader lists exactly the classes dexdump lists (what release publish checks mainClass against)', async () => {
    const dump = await run('dexdump', [path.join(first, AGENT)]);
    const dexdumped = [...dump.stdout.matchAll(/Class descriptor\s*: 'L([^']+);'/g)].map((m) =>
      (m[1] as string).replaceAll('/', '.'),
    );
    expect(dexdumped.length).toBeGreaterThan(3);
    expect(parseDexJar(await readFile(path.join(first, AGENT))).classes).toEqual(dexdumped);
  });
});

describe('glass a11y APK', () => {
  it('declares the accessibility service with its permission and config, versioned, signed, aligned', async () => {
    const apk = path.join(first, A11Y);
    const badging = await run('aapt', ['dump', 'badging', apk]);
    expect(badging.stdout).toContain(
      `package: name='dev.devicebridge.glassa11y' versionCode='${ANDROID_VERSION_CODE}' versionName='${ANDROID_VERSION}'`,
    );
    expect(badging.stdout).toMatch(/^sdkVersion:'23'$/m);
    const tree = (await run('aapt', ['dump', 'xmltree', apk, 'AndroidManifest.xml'])).stdout;
    expect(tree).toMatch(/E: service[\s\S]*android:name\(0x01010003\)="\.GlassAccessibilityService"/);
    expect(tree).toContain('"android.permission.BIND_ACCESSIBILITY_SERVICE"');
    expect(tree).toContain('"android.accessibilityservice.AccessibilityService"');
    const config = (await run('aapt', ['dump', 'xmltree', apk, 'res/xml/accessibility_service.xml'])).stdout;
    expect(config).toMatch(/android:canRetrieveWindowContent\(0x01010385\)=\(type 0x12\)0xffffffff/);
    // Android 11+ refuses resources.arsc compressed or unaligned.
    expect((await run('unzip', ['-v', apk])).stdout).toMatch(/\d+\s+Stored\s+\d+\s+0%.*resources\.arsc/);
    expect((await run('zipalign', ['-c', '-p', '4', apk])).code).toBe(0);
    const verify = await run('apksigner', ['verify', '--print-certs', apk]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain(`Signer #1 certificate SHA-256 digest: ${DEBUG_CERT_SHA256}`);
    const dump = (await run('dexdump', [apk])).stdout;
    expect(dump).toMatch(
      /Class descriptor\s*: 'Ldev\/devicebridge\/glassa11y\/GlassAccessibilityService;'\s*\n\s*Access flags[^\n]*\n\s*Superclass\s*: 'Landroid\/accessibilityservice\/AccessibilityService;'/,
    );
    expect(superclassOf(dump, 'dev/devicebridge/glassa11y/core/A11yProtocol')).toBe(
      'dev/devicebridge/glass/common/JsonLineProtocol',
    );
    for (const shared of GLASS_COMMON) expect(dump).toContain(`'L${shared};'`);
    // Only the shared source set, never the agent's own classes.
    expect(dump).not.toContain('Ldev/devicebridge/glassagent/');
  });

  it("carries the doctor's self-test activity: an Activity the shell's am start -n may start (exported)", async () => {
    const apk = path.join(first, A11Y);
    expect(
      superclassOf((await run('dexdump', [apk])).stdout, 'dev/devicebridge/glassa11y/SelfTestActivity'),
    ).toBe('android/app/Activity');
    // As the bridge (and the simulator) read it.
    expect((await readApkInfo(apk)).activities).toEqual([
      { name: 'dev.devicebridge.glassa11y.SelfTestActivity', exported: true },
    ]);
  });
});

describe('publish-android.sh', () => {
  it('publishes the three artifacts into a file store; each manifest passes manifest validate; a rerun is unchanged', async () => {
    const data = path.join(scratch, 'store');
    const published = await run('bash', [
      'release/publish-android.sh',
      first,
      '--store',
      `file:${data}`,
      '--json',
    ]);
    expect(published.code, published.stderr).toBe(0);
    const lines = published.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; manifest: Record<string, unknown> });
    expect(lines.map((l) => [l.manifest['name'], l.status])).toEqual([
      ['android-snapshot-helper', 'published'],
      ['glass-agent', 'published'],
      ['glass-a11y', 'published'],
    ]);
    expect(lines[0]!.manifest).toMatchObject({
      name: 'android-snapshot-helper',
      version: ANDROID_VERSION,
      versionCode: ANDROID_VERSION_CODE,
      packageName: 'dev.devicebridge.snapshothelper',
      installArgs: ['install', '-r', '-t'],
      signingCertSha256: DEBUG_CERT_SHA256,
      sha256: await sha256(path.join(first, HELPER)),
    });
    expect(lines[0]!.manifest).not.toHaveProperty('kind');
    expect(lines[1]!.manifest).toEqual({
      kind: 'app-process-jar',
      name: 'glass-agent',
      version: ANDROID_VERSION,
      releaseTag: `v${ANDROID_VERSION}`,
      assetName: `glass-agent-${ANDROID_VERSION}.jar`,
      apkUrl: null,
      sha256: await sha256(path.join(first, AGENT)),
      checksumName: `glass-agent-${ANDROID_VERSION}.jar.sha256`,
      mainClass: 'dev.devicebridge.glassagent.Main',
      socketName: 'glass-agent',
      devicePath: '/data/local/tmp/glass-agent.jar',
      sizeBytes: (await readFile(path.join(first, AGENT))).length,
    });
    expect(lines[2]!.manifest).toMatchObject({
      kind: 'accessibility-service-apk',
      name: 'glass-a11y',
      packageName: 'dev.devicebridge.glassa11y',
      versionCode: ANDROID_VERSION_CODE,
      serviceComponent: 'dev.devicebridge.glassa11y/.GlassAccessibilityService',
      socketName: 'glass-a11y',
      installArgs: ['install', '-r', '-t'],
      signingCertSha256: DEBUG_CERT_SHA256,
      sha256: await sha256(path.join(first, A11Y)),
    });
    for (const name of ['android-snapshot-helper', 'glass-agent', 'glass-a11y']) {
      const stored = path.join(data, 'artifacts/helpers', name, 'versions', ANDROID_VERSION, 'manifest.json');
      const validate = await run('node', ['src/cli/bin.js', 'manifest', 'validate', stored, '--json']);
      expect(validate.code, name).toBe(0);
      expect(JSON.parse(validate.stdout)).toMatchObject({ valid: true, errors: [] });
    }
    const again = await run('bash', [
      'release/publish-android.sh',
      second,
      '--store',
      `file:${data}`,
      '--json',
    ]);
    expect(again.code).toBe(0);
    expect(
      again.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { status: string }).status),
    ).toEqual(['unchanged', 'unchanged', 'unchanged']);
  });

  it('refuses an artifact that does not match its .sha256', async () => {
    const tampered = path.join(scratch, 'tampered');
    await cp(first, tampered, { recursive: true });
    await writeFile(path.join(tampered, `${HELPER}.sha256`), `${'0'.repeat(64)}  ${HELPER}\n`);
    const result = await run('bash', [
      'release/publish-android.sh',
      tampered,
      '--store',
      `file:${scratch}/s2`,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`does not match ${HELPER}.sha256`);
  });
});

describe('build-android.sh without a toolchain', () => {
  it('names the missing Debian jars and the setup script', async () => {
    const out = path.join(scratch, 'no-tools');
    const result = await run('bash', ['release/build-android.sh', out], {
      env: { DEVICEBRIDGE_TOOLS: path.join(scratch, 'empty-tools'), ANDROID_HOME: '', ANDROID_SDK_ROOT: '' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('android-23.jar');
    expect(result.stderr).toContain('dx.jar');
    expect(result.stderr).toContain('release/setup-toolchain.sh');
  });

  it('names the missing SDK parts when ANDROID_HOME points at an empty SDK', async () => {
    const result = await run('bash', ['release/build-android.sh', path.join(scratch, 'no-sdk')], {
      env: { ANDROID_HOME: path.join(scratch, 'empty-sdk'), ANDROID_SDK_ROOT: '' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('platforms/android-N/android.jar');
    expect(result.stderr).toContain('build-tools');
  });
});
