/**
 * End to end through real processes: `devicebridge serve` on a random port, `devicebridge release
 * publish` into the same data directory, then the manifest and its apkUrl over real HTTP.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, tempDir } from '../support/bridge.ts';
import { runCli, startCli, waitForExit } from '../support/cli.ts';

/** `devicebridge release publish ARGS...` */
const publish = (args: string[]) => runCli(['release', 'publish', ...args]);

describe('serve + release publish (e2e)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('publishes through the CLI and serves the manifest and verified bytes over HTTP', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const server = await startCli(['serve', '--port', '0', '--data-dir', tmp.dir, '--no-devices', '--json'], {
      env: { LOG_LEVEL: 'silent' },
    });
    cleanups.push(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    });
    const { url } = JSON.parse(server.firstLine) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const before = await fetch(`${url}/v1/helpers/android-snapshot-helper/manifest`);
    expect(before.status).toBe(404);

    const apk = fixture('snapshot-helper-v2.apk');
    const published = await publish([
      '--apk',
      apk,
      '--version',
      '0.2.0',
      '--install-args',
      'install -r -t -d',
      '--store',
      `file:${tmp.dir}`,
      '--json',
    ]);
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    const out = JSON.parse(published.stdout) as { ok: boolean; status: string; manifest: { sha256: string } };
    expect(out).toMatchObject({ ok: true, status: 'published' });

    // Another process published: a serving node sees a new latest release within a second (its
    // latest pointer is cached for at most 1 s, and it just answered 404 from it).
    let res = await fetch(`${url}/v1/helpers/android-snapshot-helper/manifest`);
    const until = Date.now() + 5000;
    while (res.status === 404 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      res = await fetch(`${url}/v1/helpers/android-snapshot-helper/manifest`);
    }
    expect(res.status).toBe(200);
    const manifest = (await res.json()) as {
      apkUrl: string;
      sha256: string;
      installArgs: string[];
      versionCode: number;
    };
    expect(manifest.installArgs).toEqual(['install', '-r', '-t', '-d']);
    expect(manifest.versionCode).toBe(2);
    expect(manifest.apkUrl).toBe(`${url}/v1/artifacts/${manifest.sha256}`);
    const bytes = Buffer.from(await (await fetch(manifest.apkUrl)).arrayBuffer());
    const expected = createHash('sha256')
      .update(await readFile(apk))
      .digest('hex');
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(expected);
    expect(manifest.sha256).toBe(expected);

    // Same bytes again: a no-op; different bytes for the same version: refused with exit 1.
    const again = await publish(['--apk', apk, '--version', '0.2.0', '--store', `file:${tmp.dir}`]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already published');
    const other = await publish([
      '--apk',
      fixture('snapshot-helper-v2-keyb.apk'),
      '--version',
      '0.2.0',
      '--store',
      `file:${tmp.dir}`,
      '--json',
    ]);
    expect(other.code).toBe(1);
    expect(JSON.parse(other.stdout)).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });

    // Graceful shutdown on SIGTERM.
    server.child.kill('SIGTERM');
    expect(await waitForExit(server.child)).toBe(0);
  });

  it('exit codes of release publish: usage errors are 2', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const missing = await publish(['--version', '1.0.0', '--store', `file:${tmp.dir}`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--apk');
    const noFile = await publish([
      '--apk',
      '/nonexistent.apk',
      '--version',
      '1.0.0',
      '--store',
      `file:${tmp.dir}`,
    ]);
    expect(noFile.code).toBe(2);
    const badArgs = await publish([
      '--apk',
      fixture('snapshot-helper-v1.apk'),
      '--version',
      '0.1.0',
      '--install-args',
      'install -r; reboot',
      '--store',
      `file:${tmp.dir}`,
    ]);
    expect(badArgs.code).toBe(2);
    expect(badArgs.stderr).toContain('installArgs.2');
    const badStore = await publish([
      '--apk',
      fixture('snapshot-helper-v1.apk'),
      '--version',
      '0.1.0',
      '--store',
      'ftp://x',
    ]);
    expect(badStore.code).toBe(2);
  });

  it('without adb the bridge still serves manifests and says why devices are unavailable', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const server = await startCli(
      ['serve', '--port', '0', '--data-dir', tmp.dir, '--simulate', 'auto', '--json'],
      {
        env: { LOG_LEVEL: 'silent', DEVICEBRIDGE_ADB_PATH: '/nonexistent/adb' },
      },
    );
    cleanups.push(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    });
    const info = JSON.parse(server.firstLine) as { url: string; devices: unknown; deviceError: string };
    expect(info.devices).toBeNull();
    expect(info.deviceError).toContain('/nonexistent/adb');
    expect((await fetch(`${info.url}/v1/helpers`)).status).toBe(200);
    const devices = await fetch(`${info.url}/v1/devices`);
    expect(devices.status).toBe(503);
    expect(((await devices.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
    server.child.kill('SIGTERM');
    expect(await waitForExit(server.child)).toBe(0);
  });

  it('refuses a non-loopback bind without tokens (exit 2, nothing listens)', async () => {
    const tmp = await tempDir();
    cleanups.push(tmp.cleanup);
    const res = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', tmp.dir]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('DEVICEBRIDGE_HOST');
    expect(res.stderr).toContain('without tokens');
  });
});
