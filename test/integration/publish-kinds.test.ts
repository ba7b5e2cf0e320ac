/**
 * Publishing the glass companions: an `app-process-jar` (a dex jar for app_process) and an
 * `accessibility-service-apk`, through publishRelease over a real filesystem store, through
 * `POST /v1/helpers/{name}/releases`, and served back by the manifest routes; `manifest validate`
 * (CLI and HTTP) accepts every kind. Callers that install and instrument refuse the other kinds.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { publishRelease } from '../../src/releases/publish.ts';
import { ReleaseRepository } from '../../src/releases/repository.ts';
import { fixture, type TestBridge, tempDir, testBridge } from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';
import { buildDexJar, buildZip } from '../support/dex-jar.ts';

const MAIN = 'dev.devicebridge.glassagent.Main';
const A11Y_APK = fixture('a11y-service.apk');
const A11Y_SERVICE = 'dev.glass.a11y/.GlassAccessibilityService';

let tmp: { dir: string; cleanup(): Promise<void> };
let store: FsArtifactStore;
let jar: string;

beforeEach(async () => {
  tmp = await tempDir();
  store = new FsArtifactStore(path.join(tmp.dir, 'artifacts'));
  jar = path.join(tmp.dir, 'glass-agent.jar');
  await writeFile(jar, buildDexJar([MAIN, `${MAIN}$1`, 'dev.devicebridge.glassagent.core.AgentProtocol']));
});
afterEach(async () => {
  await store.close();
  await tmp.cleanup();
});

const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as { code: string; message: string; details?: { errors?: unknown[] } },
  );
  return err;
};

describe('publishing an app-process-jar', () => {
  it('writes a jar manifest (no installArgs, packageName or runner) that validates and is served back', async () => {
    const result = await publishRelease(store, {
      apkPath: jar,
      name: 'glass-agent',
      version: '1.2.3',
      kind: 'app-process-jar',
      mainClass: MAIN,
      socketName: 'glass-agent',
    });
    expect(result.status).toBe('published');
    expect(result.manifest).toEqual({
      kind: 'app-process-jar',
      name: 'glass-agent',
      version: '1.2.3',
      releaseTag: 'v1.2.3',
      assetName: 'glass-agent-1.2.3.jar',
      apkUrl: null,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      checksumName: 'glass-agent-1.2.3.jar.sha256',
      mainClass: MAIN,
      socketName: 'glass-agent',
      devicePath: '/data/local/tmp/glass-agent.jar',
      sizeBytes: (await readFile(jar)).length,
    });
    const repo = new ReleaseRepository(store);
    expect(await repo.getLatestRelease('glass-agent')).toEqual(result.manifest);
    // Ensure and snapshot want an instrumentation APK: they hear which kind this is instead.
    const err = await refusal(repo.getLatestManifest('glass-agent'));
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(err.message).toBe(
      'helper glass-agent 1.2.3 is a app-process-jar release, not an instrumentation APK',
    );
    // Same bytes again: unchanged.
    const again = await publishRelease(store, {
      apkPath: jar,
      name: 'glass-agent',
      version: '1.2.3',
      kind: 'app-process-jar',
      mainClass: MAIN,
      socketName: 'glass-agent',
    });
    expect(again.status).toBe('unchanged');
  });

  it('refuses a main class the jar does not define, a plain Java jar, and APK-only fields, naming each', async () => {
    const base = { apkPath: jar, name: 'glass-agent', version: '1.0.0', kind: 'app-process-jar' as const };
    const missing = await refusal(
      publishRelease(store, { ...base, mainClass: 'dev.other.Main', socketName: 'glass-agent' }),
    );
    expect(missing).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(missing.message).toBe(
      "main class dev.other.Main is not defined by the jar's classes.dex (3 classes)",
    );

    const plain = path.join(tmp.dir, 'plain.jar');
    await writeFile(plain, buildZip([{ name: 'dev/x/Main.class', data: new Uint8Array([0xca, 0xfe]) }]));
    const notDex = await refusal(
      publishRelease(store, { ...base, apkPath: plain, mainClass: MAIN, socketName: 'glass-agent' }),
    );
    expect(notDex.message).toContain('not a valid dex jar: no classes.dex entry');

    const args = await refusal(
      publishRelease(store, {
        ...base,
        mainClass: MAIN,
        socketName: 'glass-agent',
        installArgs: ['install', '-r'],
      }),
    );
    expect(args.message).toBe('installArgs does not apply to a app-process-jar release');
    expect(args.details?.errors).toEqual([
      { path: 'installArgs', message: 'not used by kind app-process-jar' },
    ]);

    const noSocket = await refusal(publishRelease(store, { ...base, mainClass: MAIN }));
    expect(noSocket.message).toContain('needs its socket name (--socket-name)');
    const badSocket = await refusal(publishRelease(store, { ...base, mainClass: MAIN, socketName: '../x' }));
    expect(badSocket.details?.errors).toEqual([
      { path: 'socketName', message: expect.stringContaining('must be a localabstract socket name') },
    ]);
    const badPath = await refusal(
      publishRelease(store, {
        ...base,
        mainClass: MAIN,
        socketName: 'glass-agent',
        devicePath: '/sdcard/x.jar',
      }),
    );
    expect(badPath.details?.errors).toEqual([
      { path: 'devicePath', message: expect.stringContaining('directly under /data/local/tmp/') },
    ]);
    const snapshotName = await refusal(
      publishRelease(store, {
        ...base,
        name: 'android-snapshot-helper',
        mainClass: MAIN,
        socketName: 'glass-agent',
      }),
    );
    expect(snapshotName.message).toBe(
      'android-snapshot-helper is an instrumentation APK, not a app-process-jar',
    );
    // Nothing was stored by the refusals.
    expect(await new ReleaseRepository(store).listHelpers()).toEqual([]);
  });
});

describe('publishing an accessibility-service-apk', () => {
  it("takes the APK's only accessibility service and keeps installArgs", async () => {
    const result = await publishRelease(store, {
      apkPath: A11Y_APK,
      name: 'glass-a11y',
      version: '0.1.0',
      kind: 'accessibility-service-apk',
      socketName: 'glass-a11y',
    });
    expect(result.manifest).toMatchObject({
      kind: 'accessibility-service-apk',
      name: 'glass-a11y',
      assetName: 'glass-a11y-0.1.0.apk',
      packageName: 'dev.glass.a11y',
      versionCode: 1,
      serviceComponent: A11Y_SERVICE,
      socketName: 'glass-a11y',
      installArgs: ['install', '-r', '-t'],
      minSdk: 23,
      targetSdk: 29,
    });
    expect(result.manifest).not.toHaveProperty('instrumentationRunner');
  });

  it('refuses a service the APK does not declare as an accessibility service, and an APK without one', async () => {
    const base = {
      apkPath: A11Y_APK,
      name: 'glass-a11y',
      version: '0.1.0',
      kind: 'accessibility-service-apk' as const,
      socketName: 'glass-a11y',
    };
    const other = await refusal(
      publishRelease(store, { ...base, serviceComponent: 'dev.glass.a11y/.Other' }),
    );
    expect(other.message).toBe(
      'service dev.glass.a11y.Other is not an accessibility service of the APK (declared with android.permission.BIND_ACCESSIBILITY_SERVICE: dev.glass.a11y.GlassAccessibilityService)',
    );
    const foreign = await refusal(publishRelease(store, { ...base, serviceComponent: 'com.x/.Svc' }));
    expect(foreign.message).toBe("service package com.x does not match the APK's package dev.glass.a11y");
    const none = await refusal(
      publishRelease(store, { ...base, apkPath: fixture('plain-app.apk'), version: '1.0.7' }),
    );
    expect(none.message).toContain('the APK declares no accessibility service');
    const runner = await refusal(publishRelease(store, { ...base, runner: 'dev.glass.a11y/.X' }));
    expect(runner.message).toBe('runner does not apply to a accessibility-service-apk release');
  });
});

describe('the glass kinds over HTTP and the CLI', () => {
  let bridge: TestBridge;
  beforeEach(async () => {
    bridge = await testBridge({ env: { DEVICEBRIDGE_PUBLIC_URL: 'http://127.0.0.1:9' } });
  });
  afterEach(async () => bridge.cleanup());

  it('publishes a jar by multipart upload, serves its manifest and its bytes', async () => {
    const bytes = await readFile(jar);
    const form = new FormData();
    form.set('apk', new File([bytes], 'glass-agent.jar'));
    for (const [k, v] of Object.entries({
      version: '2.0.0',
      kind: 'app-process-jar',
      mainClass: MAIN,
      socketName: 'glass-agent',
    })) {
      form.set(k, v);
    }
    const res = await bridge.app.request('/v1/helpers/glass-agent/releases', { method: 'POST', body: form });
    expect(res.status).toBe(201);
    const served = await bridge.app.request('/v1/helpers/glass-agent/manifest');
    expect(served.status).toBe(200);
    const manifest = (await served.json()) as Record<string, unknown>;
    expect(manifest).toMatchObject({ kind: 'app-process-jar', mainClass: MAIN, socketName: 'glass-agent' });
    expect(manifest['apkUrl']).toBe(`http://127.0.0.1:9/v1/artifacts/${manifest['sha256']}`);
    const artifact = await bridge.app.request(`/v1/artifacts/${manifest['sha256']}`);
    expect(Buffer.from(await artifact.arrayBuffer()).equals(bytes)).toBe(true);

    const validate = await bridge.app.request('/v1/manifests/validate', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(manifest),
    });
    expect(await validate.json()).toMatchObject({ valid: true, errors: [] });
  });

  it('answers 400 naming the field for a bad kind or a jar field on an APK', async () => {
    const res = await bridge.app.request(
      '/v1/helpers/glass-a11y/releases?version=0.1.0&kind=accessibility-service-apk&socketName=glass-a11y&mainClass=a.B',
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/vnd.android.package-archive' },
        body: await readFile(A11Y_APK),
      },
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: {
        code: 'INVALID_ARGUMENT',
        message: 'mainClass does not apply to a accessibility-service-apk release',
      },
    });
    const form = new FormData();
    form.set('apk', new File([await readFile(A11Y_APK)], 'x.apk'));
    form.set('version', '0.1.0');
    form.set('kind', 'helm-chart');
    const bad = await bridge.app.request('/v1/helpers/glass-a11y/releases', { method: 'POST', body: form });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBe(
      'kind must be one of instrumentation-apk, accessibility-service-apk, app-process-jar',
    );
    expect((await bridge.app.request('/v1/helpers')).status).toBe(200);
    expect(await (await bridge.app.request('/v1/helpers')).json()).toEqual({ helpers: [] });
  });

  it('release publish --jar and manifest validate on the CLI', async () => {
    const data = path.join(tmp.dir, 'cli-store');
    const published = await runCli([
      'release',
      'publish',
      '--jar',
      jar,
      '--version',
      '1.0.0',
      '--name',
      'glass-agent',
      '--main-class',
      MAIN,
      '--socket-name',
      'glass-agent',
      '--store',
      `file:${data}`,
    ]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toContain(`published: glass-agent 1.0.0 (dex jar, main class ${MAIN})`);
    const stored = path.join(data, 'artifacts/helpers/glass-agent/versions/1.0.0/manifest.json');
    const valid = await runCli(['manifest', 'validate', stored]);
    expect(valid.code).toBe(0);
    expect(valid.stdout).toBe('valid: glass-agent 1.0.0\n');

    const both = await runCli([
      'release',
      'publish',
      '--jar',
      jar,
      '--apk',
      A11Y_APK,
      '--version',
      '1.0.0',
      '--store',
      `file:${data}`,
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give exactly one of --apk <file> and --jar <file>');
    const apkAsJar = await runCli([
      'release',
      'publish',
      '--apk',
      A11Y_APK,
      '--kind',
      'app-process-jar',
      '--version',
      '1.0.0',
      '--store',
      `file:${data}`,
    ]);
    expect(apkAsJar.code).toBe(2);
    expect(apkAsJar.stderr).toContain('--kind app-process-jar publishes a --jar');
  });
});
