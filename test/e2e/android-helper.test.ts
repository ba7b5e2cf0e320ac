/**
 * Our own helpers, built from android/ by release/build-android.sh, end to end: all three published
 * by release/publish-android.sh (the README quick start's path) and served by `devicebridge serve
 * --simulate 1` (manifests and bytes); the snapshot helper installed by
 * `ensure` through the real adb server (the simulator's package manager reads the real APK, its
 * signer and its instrumentation), then snapshot, viewport and gestures over both transports.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceBridgeClient } from '../../src/client/index.ts';
import {
  ANDROID_VERSION,
  ANDROID_VERSION_CODE,
  builtAndroid,
  DEBUG_CERT_SHA256,
  run,
} from '../support/android.ts';
import { tempDir } from '../support/bridge.ts';
import { startCli, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';

describe('the built helpers, published and served; the snapshot helper on a simulated device (e2e)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let out: string;
  let server: Awaited<ReturnType<typeof startCli>>;
  let client: DeviceBridgeClient;

  beforeAll(async () => {
    tmp = await tempDir();
    out = await builtAndroid();
    const published = await run('bash', [
      'release/publish-android.sh',
      out,
      '--store',
      `file:${tmp.dir}`,
      '--json',
    ]);
    expect(published.stderr).not.toMatch(/error/i);
    expect(published.code).toBe(0);
    server = await startCli(['serve', '--port', '0', '--data-dir', tmp.dir, '--simulate', '1', '--json'], {
      env: { DEVICEBRIDGE_ADB_PORT: String(await freePort()), LOG_LEVEL: 'silent' },
      timeoutMs: 90_000,
    });
    client = new DeviceBridgeClient({ baseUrl: (JSON.parse(server.firstLine) as { url: string }).url });
  }, 600_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await waitForExit(server.child).catch(() => server.child.kill('SIGKILL'));
    }
    await tmp?.cleanup();
  });

  it('serves a manifest for the built APK: our package, runner, versionCode and signer', async () => {
    const manifest = (await (
      await fetch(`${client.baseUrl}/v1/helpers/android-snapshot-helper/manifest`)
    ).json()) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      name: 'android-snapshot-helper',
      version: ANDROID_VERSION,
      versionCode: ANDROID_VERSION_CODE,
      packageName: 'dev.devicebridge.snapshothelper',
      instrumentationRunner: 'dev.devicebridge.snapshothelper/.SnapshotInstrumentation',
      minSdk: 23,
      signingCertSha256: DEBUG_CERT_SHA256,
    });
  });

  it('serves the glass agent jar and the a11y APK as published: their kinds and their bytes', async () => {
    for (const [name, file, kind] of [
      ['glass-agent', `glass-agent-${ANDROID_VERSION}.jar`, 'app-process-jar'],
      ['glass-a11y', `glass-a11y-${ANDROID_VERSION}.apk`, 'accessibility-service-apk'],
    ] as const) {
      const manifest = (await (
        await fetch(`${client.baseUrl}/v1/helpers/${name}/manifest`)
      ).json()) as Record<string, unknown>;
      const bytes = await readFile(path.join(out, file));
      expect(manifest).toMatchObject({
        name,
        kind,
        version: ANDROID_VERSION,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        socketName: name,
      });
      const served = await fetch(manifest['apkUrl'] as string);
      expect(served.status).toBe(200);
      expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
    }
  });

  it('ensure installs it; snapshot, viewport and gestures work over both transports', async () => {
    const lease = await client.acquireLease({ selector: { labels: { simulated: 'true' } }, ttlSeconds: 120 });
    try {
      expect(await client.ensureHelper(lease.id)).toMatchObject({ before: 'missing', action: 'installed' });
      expect(await client.ensureHelper(lease.id)).toMatchObject({ before: 'current' });
      const session = await client.snapshot(lease.id, { transport: 'session', format: 'xml' });
      const oneShot = await client.snapshot(lease.id, { transport: 'one-shot', format: 'xml' });
      expect(session.transport).toBe('session');
      expect(oneShot.transport).toBe('one-shot');
      if (session.format !== 'xml' || oneShot.format !== 'xml') throw new Error('unexpected formats');
      expect(session.xml).toContain('</hierarchy>');
      expect(oneShot.xml).toBe(session.xml);
      for (const transport of ['session', 'one-shot'] as const) {
        const viewport = await client.viewport(lease.id, transport);
        expect(viewport.width).toBeGreaterThan(0);
        const swipe = await client.gesture(lease.id, {
          kind: 'swipe',
          from: { x: 500, y: 1500 },
          to: { x: 500, y: 500 },
          transport,
        });
        expect(swipe).toMatchObject({ kind: 'swipe' });
        expect(swipe.injectedEvents).toBeGreaterThan(1);
      }
    } finally {
      await client.releaseLease(lease.id);
    }
  });
});
