/**
 * A leased device goes back to the pool clean: what one tenant leaves on a device through the
 * lease's adb endpoint (an app, files in /data/local/tmp and /sdcard, a secure setting, a
 * background process) is gone when the next tenant leases it — checked from the second tenant's
 * own adb shell, through real adb servers and a simulated device. A baseline app the tenant
 * replaced, or a reset step that fails, takes the device out of the pool with the reason.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADB_TOKEN,
  ADMIN_TOKEN,
  type DeviceBridge,
  OTHER_ADB_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';
import { type ClientAdb, startClientAdb } from '../support/client-adb.ts';
import { contractCall } from '../support/contract.ts';

type Json = Record<string, unknown>;

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/apk');
let bridge: DeviceBridge;
let tenantA: ClientAdb;
let tenantB: ClientAdb;
let tmp: string;

/** One API call; every answer conforms to the route's documented response (contract). */
const call = (token: string) => contractCall(bridge, token);

async function acquire(token: string, deviceId: string): Promise<string> {
  const res = await call(token)('POST', '/v1/leases', {
    selector: { deviceId },
    ttlSeconds: 120,
    waitSeconds: 30,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body['id'] as string;
}

/** Open the lease's adb endpoint for `who` and connect its adb server: the serial to use. */
async function endpointFor(token: string, leaseId: string, who: ClientAdb): Promise<string> {
  const opened = await call(token)('POST', `/v1/leases/${leaseId}/adb`, { publicKey: who.publicKey });
  expect(opened.status, JSON.stringify(opened.body)).toBe(200);
  const endpoint = opened.body['endpoint'] as string;
  await who.adb(['connect', endpoint]);
  for (let i = 0; i < 50; i++) {
    const state = await who.adb(['-s', endpoint, 'get-state']);
    if (state.code === 0 && state.stdout.trim() === 'device') return endpoint;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`endpoint ${endpoint} never became a device`);
}

async function shell(who: ClientAdb, serial: string, command: string): Promise<string> {
  const out = await who.adb(['-s', serial, 'shell', command]);
  return `${out.stdout}${out.stderr}`;
}

async function release(token: string, leaseId: string): Promise<{ actions: string[]; failures: string[] }> {
  const res = await call(token)('DELETE', `/v1/leases/${leaseId}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body['teardown'] as { actions: string[]; failures: string[] };
}

async function device(id: string): Promise<Json> {
  const res = await call(ADMIN_TOKEN)('GET', '/v1/devices');
  return (res.body['devices'] as Json[]).find((d) => d['id'] === id)!;
}

beforeAll(async () => {
  bridge = await testDeviceBridge({ auth: testTokens({ withAdb: true }), simulate: 2 });
  tenantA = await startClientAdb();
  tenantB = await startClientAdb();
  tmp = await mkdtemp(path.join(os.tmpdir(), 'device-reset-'));
}, 90_000);

afterAll(async () => {
  await tenantA?.close();
  await tenantB?.close();
  await bridge?.cleanup();
  if (tmp) await rm(tmp, { recursive: true, force: true });
}, 60_000);

describe('the reset between tenants', () => {
  it('every simulated device has a baseline before it is leased', async () => {
    const listed = await call(ADMIN_TOKEN)('GET', '/v1/devices');
    for (const d of listed.body['devices'] as Json[]) {
      expect(d['baseline']).toMatchObject({ capturedAt: expect.any(Number), settings: expect.any(Number) });
    }
  });

  it('removes what tenant A left through the adb endpoint before tenant B gets the device', async () => {
    const deviceId = ((await call(ADMIN_TOKEN)('GET', '/v1/devices')).body['devices'] as Json[])[0]![
      'id'
    ] as string;
    const leaseA = await acquire(ADB_TOKEN, deviceId);
    const a = await endpointFor(ADB_TOKEN, leaseA, tenantA);
    const local = path.join(tmp, 'tenant-a.txt');
    await writeFile(local, 'pushed by tenant A\n');
    expect((await tenantA.adb(['-s', a, 'push', local, '/data/local/tmp/tenant-a.txt'])).code).toBe(0);
    await shell(
      tenantA,
      a,
      "echo 'written by tenant A' > /sdcard/tenant-a.txt; mkdir -p /sdcard/Download/stash/deep; echo x > /sdcard/Download/stash/deep/f",
    );
    const installed = await tenantA.adb([
      '-s',
      a,
      'install',
      '-r',
      '-t',
      '-d',
      '-g',
      path.join(FIXTURES, 'plain-app.apk'),
    ]);
    expect(`${installed.stdout}${installed.stderr}`).toMatch(/Success/);
    await shell(tenantA, a, 'settings put secure some_marker 1');
    await shell(tenantA, a, 'nohup sleep 600 > /dev/null 2>&1 &');
    expect(await shell(tenantA, a, 'ps -A -o PID,USER,ARGS')).toMatch(/shell +sleep 600/);
    // The lease's app list shows what came through the endpoint.
    const apps = await call(ADB_TOKEN)('GET', `/v1/leases/${leaseA}/apps`);
    expect(apps.status).toBe(200);
    expect(apps.body['apps']).toContainEqual(expect.objectContaining({ source: 'adb', sha256: null }));
    await tenantA.adb(['disconnect', a]);

    const teardown = await release(ADB_TOKEN, leaseA);
    expect(teardown.failures).toEqual([]);
    expect(teardown.actions).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^reset: killed process \d+ \(sleep 600\)/),
        expect.stringMatching(/^reset: uninstalled package \S+ \(added during the lease\)/),
        'reset: removed /data/local/tmp/tenant-a.txt (added during the lease)',
        'reset: removed /sdcard/tenant-a.txt (added during the lease)',
        'reset: removed /sdcard/Download/stash (added during the lease)',
        'reset: deleted setting secure some_marker',
        'reset: woke the screen, dismissed the keyguard, went home',
        expect.stringMatching(/^reset: \d+ adb round trips$/),
      ]),
    );

    const leaseB = await acquire(OTHER_ADB_TOKEN, deviceId);
    const b = await endpointFor(OTHER_ADB_TOKEN, leaseB, tenantB);
    const packages = await shell(tenantB, b, 'pm list packages -3');
    expect(packages).not.toMatch(/plain/);
    expect(await shell(tenantB, b, 'cat /data/local/tmp/tenant-a.txt')).toMatch(/No such file/);
    expect(await shell(tenantB, b, 'cat /sdcard/tenant-a.txt')).toMatch(/No such file/);
    expect(await shell(tenantB, b, 'ls /sdcard/Download')).not.toMatch(/stash/);
    expect((await shell(tenantB, b, 'settings get secure some_marker')).trim()).toBe('null');
    expect(await shell(tenantB, b, 'ps -A -o PID,USER,ARGS')).not.toMatch(/sleep 600/);
    await tenantB.adb(['disconnect', b]);
    expect((await release(OTHER_ADB_TOKEN, leaseB)).failures).toEqual([]);
  }, 120_000);

  it('a reset step that fails takes the device out of the pool with the reason', async () => {
    const deviceId = ((await call(ADMIN_TOKEN)('GET', '/v1/devices')).body['devices'] as Json[])[1]![
      'id'
    ] as string;
    const lease = await acquire(ADB_TOKEN, deviceId);
    const a = await endpointFor(ADB_TOKEN, lease, tenantA);
    await shell(tenantA, a, 'echo left > /data/local/tmp/left-behind');
    await tenantA.adb(['disconnect', a]);
    const sim = bridge.node.simulator!.devices.find((d) => deviceId.includes(String(d.port)))!;
    sim.setFault({ failCommand: 'rm' });
    try {
      const teardown = await release(ADB_TOKEN, lease);
      expect(teardown.failures).toContainEqual(
        expect.stringMatching(/removing \/data\/local\/tmp\/left-behind failed/),
      );
      expect(teardown.actions).toContain('quarantined device');
      const after = await device(deviceId);
      expect(after['state']).toBe('quarantined');
      expect(after['quarantineReason']).toMatch(/left-behind/);
      const refused = await call(ADB_TOKEN)('POST', '/v1/leases', {
        selector: { deviceId },
        ttlSeconds: 60,
      });
      expect(refused.status).toBe(409);
    } finally {
      sim.clearFault('failCommand');
    }
    // An admin clears it once the device is clean; the next reset finds the file and removes it.
    expect((await call(ADMIN_TOKEN)('POST', `/v1/devices/${deviceId}/clear-quarantine`)).status).toBe(200);
    const next = await acquire(ADB_TOKEN, deviceId);
    const cleaned = await release(ADB_TOKEN, next);
    expect(cleaned.actions, JSON.stringify(cleaned)).toContain(
      'reset: removed /data/local/tmp/left-behind (added during the lease)',
    );
    expect(cleaned.failures).toEqual([]);
  }, 120_000);

  it('a baseline app the tenant replaced cannot be restored: the device leaves the pool with that reason', async () => {
    const deviceId = ((await call(ADMIN_TOKEN)('GET', '/v1/devices')).body['devices'] as Json[])[0]![
      'id'
    ] as string;
    // A farm's app: installed and kept through the API, it joins the device's baseline.
    const first = await acquire(ADB_TOKEN, deviceId);
    const bytes = await readFile(path.join(FIXTURES, 'plain-app.apk'));
    const installed = await bridge.app.request(`/v1/leases/${first}/apps?keep=true`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${ADB_TOKEN}`,
        'Content-Type': 'application/vnd.android.package-archive',
        'Content-Length': String(bytes.length),
      },
      body: bytes,
    });
    expect(installed.status, await installed.clone().text()).toBe(201);
    const kept = await release(ADB_TOKEN, first);
    expect(kept.failures).toEqual([]);
    expect(kept.actions).toContain(
      "reset: kept app com.devicebridge.fixture.plain joins the device's baseline",
    );
    // The next tenant replaces it with other bytes (same package, signer and versionCode).
    const lease = await acquire(ADB_TOKEN, deviceId);
    const a = await endpointFor(ADB_TOKEN, lease, tenantA);
    const replaced = await tenantA.adb([
      '-s',
      a,
      'install',
      '-r',
      '-t',
      path.join(FIXTURES, 'plain-app-v1only.apk'),
    ]);
    expect(`${replaced.stdout}${replaced.stderr}`).toMatch(/Success/);
    await tenantA.adb(['disconnect', a]);
    const teardown = await release(ADB_TOKEN, lease);
    expect(teardown.failures).toContainEqual(
      expect.stringMatching(
        /baseline package com\.devicebridge\.fixture\.plain was replaced during the lease .*cannot be restored without its APK/,
      ),
    );
    const after = await device(deviceId);
    expect(after['state']).toBe('quarantined');
    expect(after['quarantineReason']).toMatch(/com\.devicebridge\.fixture\.plain was replaced/);
    // The admin decides: this is the farm's app now (record the baseline again), then clears.
    expect((await call(ADMIN_TOKEN)('POST', `/v1/devices/${deviceId}/clear-quarantine`)).status).toBe(200);
    const recorded = await call(ADMIN_TOKEN)('POST', `/v1/devices/${deviceId}/baseline`);
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);
    expect(recorded.body['baseline']).toMatchObject({ packages: 1 });
    const next = await acquire(ADB_TOKEN, deviceId);
    const clean = await release(ADB_TOKEN, next);
    expect(clean.failures).toEqual([]);
    expect(clean.actions.filter((x) => x.includes('fixture.plain'))).toEqual([]);
  }, 120_000);

  it('recording a baseline is an admin action, refused while the device is leased', async () => {
    const deviceId = ((await call(ADMIN_TOKEN)('GET', '/v1/devices')).body['devices'] as Json[])[1]![
      'id'
    ] as string;
    const refused = await call(ADB_TOKEN)('POST', `/v1/devices/${deviceId}/baseline`);
    expect(refused.status).toBe(403);
    const lease = await acquire(ADB_TOKEN, deviceId);
    const busy = await call(ADMIN_TOKEN)('POST', `/v1/devices/${deviceId}/baseline`);
    expect(busy.status).toBe(409);
    expect((busy.body['error'] as Json)['message']).toMatch(/leased/);
    await release(ADB_TOKEN, lease);
    const unknown = await call(ADMIN_TOKEN)('POST', '/v1/devices/no-such-device/baseline');
    expect(unknown.status).toBe(404);
  }, 60_000);

  it('an expired lease is reset too, before the next tenant gets the device', async () => {
    const deviceId = ((await call(ADMIN_TOKEN)('GET', '/v1/devices')).body['devices'] as Json[])[1]![
      'id'
    ] as string;
    const res = await call(ADB_TOKEN)('POST', '/v1/leases', { selector: { deviceId }, ttlSeconds: 1 });
    expect(res.status).toBe(201);
    const id = res.body['id'] as string;
    const a = await endpointFor(ADB_TOKEN, id, tenantA);
    await shell(tenantA, a, 'echo left > /sdcard/Download/expired.txt; settings put system tenant_key 7');
    await tenantA.adb(['disconnect', a]);
    const recorded = async () => {
      for (let i = 0; i < 100; i++) {
        const found = await bridge.node.leases.store.getTeardown(id);
        if (found !== null) return found;
        await new Promise((r) => setTimeout(r, 100));
      }
      return null;
    };
    const record = await recorded();
    expect(record?.failures).toEqual([]);
    expect(record?.actions).toEqual(
      expect.arrayContaining([
        'reset: removed /sdcard/Download/expired.txt (added during the lease)',
        'reset: deleted setting system tenant_key',
      ]),
    );
    const next = await acquire(OTHER_ADB_TOKEN, deviceId);
    const b = await endpointFor(OTHER_ADB_TOKEN, next, tenantB);
    expect(await shell(tenantB, b, 'cat /sdcard/Download/expired.txt')).toMatch(/No such file/);
    expect((await shell(tenantB, b, 'settings get system tenant_key')).trim()).toBe('null');
    await tenantB.adb(['disconnect', b]);
    await release(OTHER_ADB_TOKEN, next);
  }, 60_000);
});
