/**
 * End to end through real processes: `devicebridge serve --simulate 2` started from the CLI, the
 * snapshot helper published with `devicebridge release publish`, then a lease driven through the
 * typed client (devicebridge/client) and the lease CLI.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceBridgeClient } from '../../src/client/index.ts';
import { PNG_MAGIC } from '../../src/protocol/helper/png-header.ts';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper, runCli, startCli, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';

describe('serve --simulate 2 driven through the typed client and the CLI (e2e)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let server: Awaited<ReturnType<typeof startCli>>;
  let url: string;
  const env = () => ({ DEVICEBRIDGE_URL: url, LOG_LEVEL: 'silent' });

  beforeAll(async () => {
    tmp = await tempDir();
    await publishFixtureHelper(tmp.dir);
    server = await startCli(['serve', '--port', '0', '--data-dir', tmp.dir, '--simulate', '2', '--json'], {
      env: { DEVICEBRIDGE_ADB_PORT: String(await freePort()), LOG_LEVEL: 'silent' },
    });
    const info = JSON.parse(server.firstLine) as {
      url: string;
      devices: Array<{ state: string }>;
      leases: string;
    };
    url = info.url;
    expect(info.leases).toBe('memory');
    expect(info.devices.map((d) => d.state)).toEqual(['online', 'online']);
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await waitForExit(server.child).catch(() => server.child.kill('SIGKILL'));
    }
    await tmp?.cleanup();
  });

  it('acquire → ensure → snapshot (session and one-shot) → gesture → release; the device is free again', async () => {
    const client = new DeviceBridgeClient({ baseUrl: url });
    const lease = await client.acquireLease({ selector: { labels: { simulated: 'true' } }, ttlSeconds: 120 });
    expect(lease.state).toBe('active');
    const ensured = await client.ensureHelper(lease.id);
    expect(ensured).toMatchObject({ before: 'missing', action: 'installed' });
    const session = await client.snapshot(lease.id, { transport: 'session' });
    expect(session.transport).toBe('session');
    const oneShot = await client.snapshot(lease.id, { transport: 'one-shot', format: 'xml' });
    expect(oneShot.transport).toBe('one-shot');
    if (session.format !== 'json' || oneShot.format !== 'xml') throw new Error('unexpected formats');
    expect(session.snapshot.nodeCount).toBe((oneShot.xml.match(/<node /g) ?? []).length);
    const tap = await client.gesture(lease.id, { kind: 'tap', x: 540, y: 1200 });
    expect(tap.injectedEvents).toBeGreaterThan(0);
    const viewport = await client.viewport(lease.id);
    expect(viewport.width).toBeGreaterThan(0);
    const released = await client.releaseLease(lease.id);
    expect(released.lease.state).toBe('released');
    const device = (await client.listDevices()).devices.find((d) => d.id === lease.deviceId);
    expect(device).toMatchObject({ leased: false, state: 'online' });
    await expect(client.snapshot(lease.id)).rejects.toMatchObject({ status: 410, code: 'LEASE_EXPIRED' });
  });

  it('screenshot: the typed client and `devicebridge screenshot -o FILE.png`', async () => {
    const client = new DeviceBridgeClient({ baseUrl: url });
    const lease = await client.acquireLease({ selector: { labels: { simulated: 'true' } } });
    const shot = await client.screenshot(lease.id);
    if (shot.notModified) throw new Error('a first screenshot cannot be 304');
    expect(shot).toMatchObject({ width: 1080, height: 2400 });
    expect(await client.screenshot(lease.id, { ifNoneMatch: shot.etag })).toEqual({
      notModified: true,
      etag: shot.etag,
    });
    const pngFile = path.join(tmp.dir, 'screen.png');
    const cli = await runCli(['screenshot', '--lease', lease.id, '-o', pngFile, '--json'], { env: env() });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      file: pngFile,
      width: 1080,
      height: 2400,
      etag: shot.etag,
    });
    expect([...(await readFile(pngFile)).subarray(0, 8)]).toEqual([...PNG_MAGIC]);
    await client.releaseLease(lease.id);
    await expect(client.screenshot(lease.id)).rejects.toMatchObject({ status: 410, code: 'LEASE_EXPIRED' });
  });

  it('the lease CLI: acquire, snapshot, gesture, list, renew, release with documented exit codes', async () => {
    const acquired = await runCli(
      ['lease', 'acquire', '--label', 'simulated=true', '--ttl', '60', '--json'],
      { env: env() },
    );
    expect(acquired.code).toBe(0);
    const lease = JSON.parse(acquired.stdout) as { id: string; deviceId: string };
    const snap = await runCli(['snapshot', '--lease', lease.id, '--format', 'xml'], { env: env() });
    expect(snap.code).toBe(0);
    expect(snap.stdout).toContain('</hierarchy>');
    const gesture = await runCli(
      ['gesture', '--lease', lease.id, 'swipe', '500', '1500', '500', '500', '--json'],
      { env: env() },
    );
    expect(gesture.code).toBe(0);
    expect(JSON.parse(gesture.stdout)).toMatchObject({ kind: 'swipe' });
    // Human output names the gesture asked for (a tap is sent as a one-pointer plan).
    const tap = await runCli(['gesture', '--lease', lease.id, 'tap', '500', '1500'], { env: env() });
    expect(tap.code, tap.stderr).toBe(0);
    expect(tap.stdout).toMatch(/^tap: \d+ events \(/);
    const longPress = await runCli(['gesture', '--lease', lease.id, 'long-press', '500', '1500'], {
      env: env(),
    });
    expect(longPress.stdout).toMatch(/^long-press: \d+ events \(/);
    const list = await runCli(['lease', 'list'], { env: env() });
    expect(list.stdout).toContain(lease.id);
    expect((await runCli(['lease', 'renew', lease.id, '--ttl', '90'], { env: env() })).code).toBe(0);
    const bad = await runCli(['lease', 'acquire', '--ttl', 'soon'], { env: env() });
    expect(bad.code).toBe(2);
    const missing = await runCli(['lease', 'acquire', '--label', 'os=ios', '--json'], { env: env() });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    const released = await runCli(['lease', 'release', lease.id], { env: env() });
    expect(released.code).toBe(0);
    expect(released.stdout).toContain('released');
    const again = await runCli(['snapshot', '--lease', lease.id], { env: env() });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('LEASE_EXPIRED');
  });

  it('operator ergonomics: release twice succeeds quietly, devices list, every --json error is one object with code, message, retryable', async () => {
    const acquired = await runCli(['lease', 'acquire', '--ttl', '60', '--json'], { env: env() });
    const lease = JSON.parse(acquired.stdout) as { id: string; deviceId: string };
    expect((await runCli(['lease', 'release', lease.id], { env: env() })).code).toBe(0);
    const twice = await runCli(['lease', 'release', lease.id], { env: env() });
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.stdout.trim()).toBe(`${lease.id} already released`);
    expect(twice.stderr).toBe('');
    const twiceJson = await runCli(['lease', 'release', lease.id, '--json'], { env: env() });
    expect(JSON.parse(twiceJson.stdout)).toMatchObject({
      alreadyEnded: true,
      lease: { id: lease.id, state: 'released' },
    });

    const devices = await runCli(['devices', 'list', '--json'], { env: env() });
    expect(devices.code).toBe(0);
    const listed = (JSON.parse(devices.stdout) as { devices: Array<{ id: string; state: string }> }).devices;
    expect(listed.map((d) => d.id)).toContain(lease.deviceId);
    const human = await runCli(['devices', 'list'], { env: env() });
    expect(human.stdout).toMatch(new RegExp(`^${lease.deviceId}\tonline\t`, 'm'));

    const cases: Array<[string[], Record<string, string>, number, string, boolean]> = [
      [['lease', 'renew', 'lease_unknown', '--json'], env(), 1, 'NOT_FOUND', false],
      [['lease', 'acquire', '--ttl', 'soon', '--json'], env(), 2, 'INVALID_ARGUMENT', false],
      [['lease', 'list', '--json'], { DEVICEBRIDGE_URL: 'http://127.0.0.1:1' }, 1, 'UNAVAILABLE', true],
      [['lease', 'list', '--json', '--no-such-flag'], env(), 2, 'INVALID_ARGUMENT', false],
      [['devices', 'list', '--json'], { DEVICEBRIDGE_URL: 'ftp://x' }, 2, 'INVALID_ARGUMENT', false],
    ];
    for (const [args, caseEnv, code, errorCode, retryable] of cases) {
      const r = await runCli(args, { env: caseEnv });
      const what = `${args.join(' ')}: ${r.stdout} ${r.stderr}`;
      expect(r.code, what).toBe(code);
      const lines = r.stdout.trim().split('\n');
      expect(lines, what).toHaveLength(1);
      const body = JSON.parse(lines[0]!) as {
        ok: boolean;
        error: { code: string; message: string; retryable: boolean };
      };
      expect(body.ok, what).toBe(false);
      expect(body.error, what).toMatchObject({ code: errorCode, retryable });
      expect(body.error.message.length, what).toBeGreaterThan(0);
      expect(r.stderr, what).not.toMatch(/\n\s+at /);
    }
  });
});
