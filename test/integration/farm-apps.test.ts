/**
 * The app under test on a lease, through the HTTP app over a simulated device reached through the
 * real adb server: upload and by-sha256 installs (verified on the device), the list, launch / stop /
 * clear / uninstall, signature conflicts with pm's code, tenancy, and uninstall on teardown.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactCache } from '../../src/artifacts/cache.ts';
import { sha256Bytes } from '../../src/artifacts/hash.ts';
import { LeaseRoom } from '../../src/lease-session/index.ts';
import {
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  type DeviceBridge,
  fixture,
  listenApp,
  OTHER_TENANT_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';
import { contractCall, contractProblems } from '../support/contract.ts';

const PLAIN = 'com.devicebridge.fixture.plain';
const HELPER = 'com.callstack.agentdevice.snapshothelper';

describe('lease apps', () => {
  let bridge: DeviceBridge;
  let api: ReturnType<typeof contractCall>;
  let admin: ReturnType<typeof contractCall>;
  beforeAll(async () => {
    bridge = await testDeviceBridge({
      auth: testTokens(),
      simulate: 1,
      env: { DEVICEBRIDGE_MAX_UPLOAD_BYTES: String(64 * 1024) },
    });
    api = contractCall(bridge, CLIENT_TOKEN);
    admin = contractCall(bridge, ADMIN_TOKEN);
  });
  afterAll(async () => bridge?.cleanup());

  async function upload(leaseId: string, file: string, query = '') {
    const bytes = await readFile(fixture(file));
    const path = `/v1/leases/${leaseId}/apps${query}`;
    const res = await bridge.app.request(path, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${CLIENT_TOKEN}`,
        'Content-Type': 'application/vnd.android.package-archive',
        'Content-Length': String(bytes.length),
      },
      body: bytes,
    });
    const body = await res.json();
    expect(contractProblems('POST', path, res.status, body)).toEqual([]);
    // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
    return { status: res.status, body: body as Record<string, any>, sha256: sha256Bytes(bytes) };
  }

  const packages = async (leaseId: string) =>
    (await admin('POST', `/v1/leases/${leaseId}/shell`, { argv: ['pm', 'list', 'packages'] })).body
      .stdout as string;

  it('install (upload and by sha256) → list → launch → stop → clear → uninstall on teardown', async () => {
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 120 })).body;

    const plain = await upload(lease.id, 'plain-app.apk');
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    expect(plain.body).toMatchObject({ packageName: PLAIN, sha256: plain.sha256, keep: false });
    expect(await packages(lease.id)).toContain(`package:${PLAIN}\n`);

    const helperSha = sha256Bytes(await readFile(fixture('snapshot-helper-v2.apk')));
    const kept = await api('POST', `/v1/leases/${lease.id}/apps`, { sha256: helperSha, keep: true });
    expect(kept.status, JSON.stringify(kept.body)).toBe(201);
    expect(kept.body).toMatchObject({ packageName: HELPER, versionCode: 2, keep: true });

    const listed = await api('GET', `/v1/leases/${lease.id}/apps`);
    expect(listed.body.apps.map((a: { packageName: string }) => a.packageName).sort()).toEqual(
      [HELPER, PLAIN].sort(),
    );

    const launched = await api('POST', `/v1/leases/${lease.id}/apps/${PLAIN}/launch`, {});
    expect(launched.status, JSON.stringify(launched.body)).toBe(200);
    expect(launched.body).toMatchObject({ packageName: PLAIN, action: 'launch' });
    // A component the package does not declare (this fixture has no activity): refused, as Android does.
    const component = await api('POST', `/v1/leases/${lease.id}/apps/${PLAIN}/launch`, {
      component: `${PLAIN}/.MainActivity`,
    });
    expect(component.status, JSON.stringify(component.body)).toBe(409);
    expect(component.body.error.message).toContain(`{${PLAIN}/${PLAIN}.MainActivity} does not exist`);
    for (const action of ['stop', 'clear']) {
      const res = await api('POST', `/v1/leases/${lease.id}/apps/${PLAIN}/${action}`);
      expect(res.status, action).toBe(200);
    }

    const released = await api('DELETE', `/v1/leases/${lease.id}`);
    expect(released.status).toBe(200);
    expect(released.body.teardown.actions).toContain(
      `uninstalled app ${PLAIN} (installed during the lease) on ${bridge.node.simulator!.devices[0]!.serial}`,
    );
    expect(released.body.teardown.actions).toContain(
      `kept app ${HELPER} (installed during the lease, asked to keep) on ${bridge.node.simulator!.devices[0]!.serial}`,
    );
    expect(released.body.teardown.failures).toEqual([]);

    const next = (await admin('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    const after = await packages(next.id);
    expect(after).not.toContain(`package:${PLAIN}\n`);
    expect(after).toContain(`package:${HELPER}\n`);
    expect((await admin('GET', `/v1/leases/${next.id}/apps`)).body.apps).toEqual([]);
    await admin('DELETE', `/v1/leases/${next.id}`);
  });

  it('errors: signature conflict with pm code, unresolvable launch, bad installArgs, unknown sha256, too large', async () => {
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 120 })).body;
    // The helper (key a) is installed from the previous test (kept); key b conflicts.
    const conflict = await upload(lease.id, 'snapshot-helper-v2-keyb.apk');
    expect(conflict.status).toBe(502);
    expect(conflict.body.error).toMatchObject({
      code: 'HELPER_INSTALL_FAILED',
      details: { failureCode: 'INSTALL_FAILED_UPDATE_INCOMPATIBLE', packageName: HELPER },
    });
    // Nothing was uninstalled to resolve it.
    expect(await packages(lease.id)).toContain(`package:${HELPER}\n`);

    const unresolved = await api('POST', `/v1/leases/${lease.id}/apps/com.example.missing/launch`);
    expect(unresolved.status).toBe(409);
    expect(unresolved.body.error.message).toContain('unable to resolve');
    const badName = await api('POST', `/v1/leases/${lease.id}/apps/not-a-package/stop`);
    expect(badName.status).toBe(400);

    const badArgs = await upload(lease.id, 'plain-app.apk', '?installArgs=install%20-x');
    expect(badArgs.status).toBe(400);
    expect(badArgs.body.error.code).toBe('INSTALL_ARGS_REJECTED');

    const unknown = await api('POST', `/v1/leases/${lease.id}/apps`, { sha256: 'a'.repeat(64) });
    expect(unknown.status).toBe(404);

    const big = await bridge.app.request(`/v1/leases/${lease.id}/apps`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${CLIENT_TOKEN}`,
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(65 * 1024),
      },
      body: Buffer.alloc(65 * 1024),
    });
    expect(big.status).toBe(413);
    // The refused install was journaled before it ran: teardown leaves the package that was there
    // (the kept helper), and the device goes back to the pool clean.
    const released = await api('DELETE', `/v1/leases/${lease.id}`);
    expect(released.body.teardown.failures).toEqual([]);
    expect(released.body.teardown.actions).toContain(
      `app ${HELPER} on ${bridge.node.simulator!.devices[0]!.serial} is not the APK the lease installed: left as it is`,
    );
    const next = (await admin('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    expect(await packages(next.id)).toContain(`package:${HELPER}\n`);
    await admin('DELETE', `/v1/leases/${next.id}`);
  });

  it('CLI: devicebridge app install | list | launch | uninstall', async () => {
    const served = await listenApp(bridge.app);
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    try {
      const env = { DEVICEBRIDGE_URL: served.url, DEVICEBRIDGE_TOKEN: CLIENT_TOKEN };
      const cli = (...args: string[]) => runCli(['app', ...args, '--lease', lease.id], { env });
      const installed = await cli('install', fixture('plain-app.apk'), '--json');
      expect(installed.code, installed.stderr).toBe(0);
      expect(JSON.parse(installed.stdout)).toMatchObject({ packageName: PLAIN, keep: false });
      const listed = await cli('list', '--json');
      expect(JSON.parse(listed.stdout).apps.map((a: { packageName: string }) => a.packageName)).toEqual([
        PLAIN,
      ]);
      expect((await cli('launch', PLAIN)).stdout).toContain('launched');
      const uninstalled = await cli('uninstall', PLAIN);
      expect(uninstalled.code).toBe(0);
      expect(await packages(lease.id)).not.toContain(`package:${PLAIN}\n`);
      const missing = await cli('launch', 'com.example.missing');
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('CONFLICT');
      expect((await cli('install')).code).toBe(2);
    } finally {
      await served.close();
      await api('DELETE', `/v1/leases/${lease.id}`);
    }
  });

  it("another tenant cannot see or touch the lease's apps (404)", async () => {
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    const other = contractCall(bridge, OTHER_TENANT_TOKEN);
    expect((await other('GET', `/v1/leases/${lease.id}/apps`)).status).toBe(404);
    expect((await other('POST', `/v1/leases/${lease.id}/apps/${PLAIN}/launch`)).status).toBe(404);
    expect((await other('DELETE', `/v1/leases/${lease.id}/apps/${PLAIN}`)).status).toBe(404);
    await api('DELETE', `/v1/leases/${lease.id}`);
  });
});

describe('lease apps: the teardown journal', () => {
  let bridge: DeviceBridge;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ simulate: 1, redisPrefix: `test:${randomUUID()}:` });
  }, 120_000);
  afterAll(async () => bridge?.cleanup());

  it('a node that did not install the app (a restarted bridge) uninstalls it from the Redis journal', async () => {
    const api = contractCall(bridge, null);
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    const helperSha = sha256Bytes(await readFile(fixture('snapshot-helper-v2.apk')));
    expect((await api('POST', `/v1/leases/${lease.id}/apps`, { sha256: helperSha })).status).toBe(201);
    // A fresh room knows nothing in memory: only the store's journal says what to undo.
    const restarted = new LeaseRoom({
      adb: bridge.node.adb,
      releases: bridge.services.releases,
      store: bridge.services.store,
      cache: new ArtifactCache(path.join(bridge.dataDir, 'cache2')),
      fence: bridge.node.leases.store,
      journal: bridge.node.leases.store,
    });
    const { actions, failures } = await restarted.closeLease(lease.id);
    expect(failures).toEqual([]);
    expect(actions.some((a) => a.startsWith(`uninstalled app ${HELPER}`))).toBe(true);
    const listed = await api('POST', `/v1/leases/${lease.id}/shell`, { argv: ['pm', 'list', 'packages'] });
    expect(listed.body.stdout).not.toContain(`package:${HELPER}\n`);
    // Taken once: the release's own teardown has nothing left to uninstall.
    const released = await api('DELETE', `/v1/leases/${lease.id}`);
    expect(released.body.teardown.actions.some((a: string) => a.includes('uninstalled app'))).toBe(false);
  });

  it('a lease acquired with keepApps (HTTP and `lease acquire --keep-apps`) leaves its apps installed, recorded as kept', async () => {
    const api = contractCall(bridge, null);
    const serial = bridge.node.simulator!.devices[0]!.serial;
    const served = await listenApp(bridge.app);
    let leaseId: string | undefined;
    try {
      const acquired = await runCli(['lease', 'acquire', '--keep-apps', '--ttl', '60', '--json'], {
        env: { DEVICEBRIDGE_URL: served.url },
      });
      expect(acquired.code, acquired.stderr).toBe(0);
      const lease = JSON.parse(acquired.stdout);
      leaseId = lease.id;
      expect(lease.keepApps).toBe(true);
      // Stored in Redis with the lease: a later read answers it too.
      expect((await api('GET', `/v1/leases/${lease.id}`)).body.keepApps).toBe(true);
      const helperSha = sha256Bytes(await readFile(fixture('snapshot-helper-v2.apk')));
      const installed = await api('POST', `/v1/leases/${lease.id}/apps`, { sha256: helperSha });
      expect(installed.status, JSON.stringify(installed.body)).toBe(201);
      expect(installed.body.keep).toBe(true);
      const released = await api('DELETE', `/v1/leases/${lease.id}`);
      leaseId = undefined;
      expect(released.body.teardown.actions).toContain(
        `kept app ${HELPER} (installed during the lease, asked to keep) on ${serial}`,
      );
      expect(released.body.teardown.actions.some((a: string) => a.includes('uninstalled app'))).toBe(false);
      expect(released.body.teardown.failures).toEqual([]);
    } finally {
      await served.close();
      if (leaseId !== undefined) await api('DELETE', `/v1/leases/${leaseId}`);
    }
    // The next lease (without keepApps) still finds it, and its own install of it is uninstalled again.
    const next = (await api('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    expect(next.keepApps).toBeUndefined();
    const listed = await api('POST', `/v1/leases/${next.id}/shell`, { argv: ['pm', 'list', 'packages'] });
    expect(listed.body.stdout).toContain(`package:${HELPER}\n`);
    const helperSha = sha256Bytes(await readFile(fixture('snapshot-helper-v2.apk')));
    expect((await api('POST', `/v1/leases/${next.id}/apps`, { sha256: helperSha })).body.keep).toBe(false);
    const released = await api('DELETE', `/v1/leases/${next.id}`);
    expect(released.body.teardown.actions).toContain(
      `uninstalled app ${HELPER} (installed during the lease) on ${serial}`,
    );
  });
});
