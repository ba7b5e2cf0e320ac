/**
 * release/build-android.sh with an Android SDK (ANDROID_HOME): the helpers are compiled against
 * API 23 there too, so an API newer than the helpers' minimum fails the build on both toolchains.
 *
 * No real SDK is installed here: the test lays out one whose build-tools wrap Debian's tools (d8
 * runs dx) and whose newest platform jar is API 23's plus a class that only appeared in API 26.
 */
import { chmod, cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANDROID_VERSION, ROOT, run } from '../support/android.ts';

const TOOLS = path.join(ROOT, '.tools');
let scratch: string;
let sdk: string;

/** An executable shell script at `file`. */
async function script(file: string, body: string): Promise<void> {
  await writeFile(file, `#!/usr/bin/env bash\nset -euo pipefail\n${body}\n`);
  await chmod(file, 0o755);
}

/** A copy of android/ and release/ (the build's whole input) to change freely. */
async function copyOfSources(name: string): Promise<string> {
  const tree = path.join(scratch, name);
  await cp(path.join(ROOT, 'android'), path.join(tree, 'android'), { recursive: true });
  await cp(path.join(ROOT, 'release'), path.join(tree, 'release'), { recursive: true });
  return tree;
}

/** SDK layout: platforms/android-35 (API 23 + NotificationChannel), optionally platforms/android-23, build-tools/35.0.0. */
async function makeSdk(dir: string, withApi23: boolean): Promise<void> {
  const stub = path.join(dir, 'stub');
  await mkdir(path.join(stub, 'src/android/app'), { recursive: true });
  await writeFile(
    path.join(stub, 'src/android/app/NotificationChannel.java'),
    'package android.app;\npublic final class NotificationChannel {\n  public NotificationChannel() {}\n}\n',
  );
  const compiled = await run('javac', [
    '-d',
    path.join(stub, 'classes'),
    path.join(stub, 'src/android/app/NotificationChannel.java'),
  ]);
  expect(compiled.code, compiled.stderr).toBe(0);
  const api35 = path.join(dir, 'platforms/android-35');
  await mkdir(api35, { recursive: true });
  await cp(path.join(TOOLS, 'android-23.jar'), path.join(api35, 'android.jar'));
  const added = await run('jar', [
    'uf',
    path.join(api35, 'android.jar'),
    '-C',
    path.join(stub, 'classes'),
    'android/app/NotificationChannel.class',
  ]);
  expect(added.code, added.stderr).toBe(0);
  if (withApi23) {
    await mkdir(path.join(dir, 'platforms/android-23'), { recursive: true });
    await cp(path.join(TOOLS, 'android-23.jar'), path.join(dir, 'platforms/android-23/android.jar'));
  }
  const bt = path.join(dir, 'build-tools/35.0.0');
  await mkdir(bt, { recursive: true });
  for (const tool of ['aapt', 'zipalign', 'apksigner'])
    await script(path.join(bt, tool), `exec ${tool} "$@"`);
  // d8 [--release] [--min-api N] [--lib JAR] --output DIR CLASSES… → dx into DIR/classes.dex.
  await script(
    path.join(bt, 'd8'),
    [
      'out=""; files=()',
      'while [ $# -gt 0 ]; do',
      '  case "$1" in',
      '    --release) shift ;;',
      '    --min-api|--lib) shift 2 ;;',
      '    --output) out="$2"; shift 2 ;;',
      '    *) files+=("$1"); shift ;;',
      '  esac',
      'done',
      `exec java -jar ${JSON.stringify(path.join(TOOLS, 'dx.jar'))} --dex --no-strict --min-sdk-version=21 --output="$out/classes.dex" "\${files[@]}"`,
    ].join('\n'),
  );
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'android-build-sdk-'));
  sdk = path.join(scratch, 'sdk');
  await makeSdk(sdk, true);
}, 120_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const sdkEnv = (home: string) => ({
  ANDROID_HOME: home,
  ANDROID_SDK_ROOT: '',
  DEVICEBRIDGE_BUILD_TOOLS: '35.0.0',
});

describe('build-android.sh with an Android SDK', () => {
  it('builds the three helpers', async () => {
    const out = path.join(scratch, 'out');
    const result = await run('bash', ['release/build-android.sh', out], {
      env: sdkEnv(sdk),
      timeoutMs: 420_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await readdir(out)).sort()).toEqual(
      [
        `glass-a11y-${ANDROID_VERSION}.apk`,
        `glass-agent-${ANDROID_VERSION}.jar`,
        `snapshot-helper-${ANDROID_VERSION}.apk`,
      ]
        .flatMap((f) => [f, `${f}.sha256`])
        .sort(),
    );
  }, 450_000);

  it('fails when the sources use an API newer than 23, although the newest platform has it', async () => {
    const tree = await copyOfSources('newer-api');
    await writeFile(
      path.join(tree, 'android/glass-agent/src/main/java/dev/devicebridge/glassagent/UsesNewerApi.java'),
      'package dev.devicebridge.glassagent;\nfinal class UsesNewerApi {\n  Object make() { return new android.app.NotificationChannel(); }\n}\n',
    );
    const result = await run('bash', [path.join(tree, 'release/build-android.sh'), path.join(tree, 'out')], {
      env: sdkEnv(sdk),
      timeoutMs: 420_000,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('NotificationChannel');
    expect(result.stderr).toContain('UsesNewerApi.java');
  }, 450_000);

  it('names platforms;android-23 when the SDK lacks it and no Debian API 23 jar is there', async () => {
    const bare = path.join(scratch, 'sdk-without-23');
    await makeSdk(bare, false);
    const result = await run('bash', ['release/build-android.sh', path.join(scratch, 'never')], {
      env: { ...sdkEnv(bare), DEVICEBRIDGE_TOOLS: path.join(scratch, 'no-tools') },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('platforms/android-23/android.jar');
    expect(result.stderr).toContain("sdkmanager 'platforms;android-23'");
  }, 120_000);
});
