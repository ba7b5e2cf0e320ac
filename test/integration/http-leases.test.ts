/**
 * Devices, leases and lease-scoped helper operations through the HTTP app, over simulated devices
 * reached through the real adb server. Split into happy / error / security cases.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePublicKey } from '../support/adb-keys.ts';
import {
  ADB_TOKEN,
  ADMIN_TOKEN,
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  OTHER_TENANT_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';
import {
  binaryContractProblems,
  checkedOperations,
  contractCall,
  LEASE_ROUTES,
} from '../support/contract.ts';
import { waitFor } from '../support/wait-for.ts';

type Json = Record<string, any>;

const call = contractCall;

describe('leases: happy path', () => {
  let bridge: DeviceBridge;
  let api: ReturnType<typeof call>;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens({ withAdb: true }) });
    api = call(bridge, CLIENT_TOKEN);
  });
  afterAll(async () => bridge?.cleanup());

  it('lists simulated devices with properties', async () => {
    const res = await api('GET', '/v1/devices');
    expect(res.status).toBe(200);
    expect(res.body.devices).toHaveLength(2);
    for (const d of res.body.devices) {
      expect(d).toMatchObject({ state: 'online', leased: false, leaseId: null, properties: { sdk: 34 } });
    }
  });

  it('acquire → ensure → snapshot (session, one-shot, xml) → viewport → gestures → release', async () => {
    const acquired = await api('POST', '/v1/leases', {
      selector: { labels: { simulated: 'true' } },
      ttlSeconds: 120,
    });
    expect(acquired.status).toBe(201);
    const lease = acquired.body;
    expect(lease).toMatchObject({ state: 'active', tenant: 'acme', holder: 'ci', ttlSeconds: 120 });
    expect(lease.fencingToken).toBeGreaterThanOrEqual(1);
    expect((await api('GET', `/v1/leases/${lease.id}`)).body.id).toBe(lease.id);

    const ensured = await api('POST', `/v1/leases/${lease.id}/helpers/android-snapshot-helper/ensure`, {});
    expect(ensured.status).toBe(200);
    expect(ensured.body).toMatchObject({ before: 'missing', action: 'installed', versionCode: 2 });
    // The device view names what ensure installed: versionCode and the release's semver.
    const manifest = (await api('GET', '/v1/helpers/android-snapshot-helper/manifest')).body;
    const device = ((await api('GET', '/v1/devices')).body.devices as Json[]).find(
      (d) => d.id === lease.deviceId,
    );
    expect(device?.helpers['android-snapshot-helper']).toMatchObject({
      versionCode: 2,
      version: manifest.version,
      sha256: manifest.sha256,
    });
    expect(
      (await api('POST', `/v1/leases/${lease.id}/helpers/android-snapshot-helper/ensure`, {})).body,
    ).toMatchObject({
      before: 'current',
      action: 'none',
    });
    // A helper nobody published: NOT_FOUND saying how to publish one.
    const unpublished = await api('POST', `/v1/leases/${lease.id}/helpers/other-helper/ensure`, {});
    expect(unpublished.status).toBe(404);
    expect(unpublished.body.error.message).toContain(
      'helper other-helper has no published release on this bridge; publish one: devicebridge release publish',
    );

    const session = await api('POST', `/v1/leases/${lease.id}/snapshot`, { transport: 'session' });
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({
      transport: 'session',
      format: 'json',
      truncated: false,
      windowCount: 4,
    });
    expect(session.body.snapshot.windows.length).toBe(4);
    expect(session.body.snapshot.windows[0].ref).toBe('e1');
    // Written as bytes by the route (src/snapshot/json-writer.ts), typed as c.json would type it.
    expect(session.headers.get('content-type')).toBe('application/json');
    const oneShot = await api('POST', `/v1/leases/${lease.id}/snapshot`, {
      transport: 'one-shot',
      format: 'xml',
    });
    expect(oneShot.body).toMatchObject({ transport: 'one-shot', format: 'xml' });
    expect(oneShot.body.xml).toContain('<hierarchy');
    expect(oneShot.body.nodeCount).toBe(session.body.nodeCount);

    const viewport = await api('GET', `/v1/leases/${lease.id}/viewport`);
    expect(viewport.body).toMatchObject({ x: expect.any(Number), width: expect.any(Number) });
    expect(viewport.body.width).toBeGreaterThan(0);

    for (const g of [
      { kind: 'tap', x: 100, y: 200 },
      { kind: 'long-press', x: 100, y: 200 },
      { kind: 'swipe', from: { x: 500, y: 1500 }, to: { x: 500, y: 400 }, durationMs: 200 },
      { kind: 'drag', from: { x: 100, y: 100 }, to: { x: 300, y: 300 } },
      { kind: 'pinch', center: { x: 540, y: 1200 }, startDistance: 300, endDistance: 100 },
      { kind: 'rotate', center: { x: 540, y: 1200 }, radius: 200, startAngle: 0, endAngle: 45 },
      {
        kind: 'plan',
        plan: {
          kind: 'swipe',
          durationMs: 0,
          pointers: [
            {
              pointerId: 0,
              samples: [
                { offsetMs: 0, x: 1, y: 1 },
                { offsetMs: 0, x: 1, y: 1 },
              ],
            },
          ],
        },
        transport: 'one-shot',
      },
    ]) {
      const res = await api('POST', `/v1/leases/${lease.id}/gestures`, g);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.injectedEvents).toBeGreaterThan(0);
    }

    // Leave a session running so release has one to tear down.
    expect((await api('GET', `/v1/leases/${lease.id}/viewport?transport=session`)).body.transport).toBe(
      'session',
    );
    const shotPath = `/v1/leases/${lease.id}/screenshot`;
    const shot = await bridge.app.request(shotPath, { headers: { Authorization: `Bearer ${CLIENT_TOKEN}` } });
    expect(shot.status).toBe(200);
    expect(binaryContractProblems('GET', shotPath, shot.status, shot.headers.get('content-type'))).toEqual(
      [],
    );
    // An adb endpoint for a client key, opened by a token of the lease's tenant holding the `adb`
    // capability: release closes it (test/integration/http-adb-endpoint.test.ts).
    const adb = await call(bridge, ADB_TOKEN)('POST', `/v1/leases/${lease.id}/adb`, {
      publicKey: fixturePublicKey,
    });
    expect(adb.status).toBe(200);
    const renewed = await api('POST', `/v1/leases/${lease.id}/renew`, { ttlSeconds: 600 });
    expect(renewed.status).toBe(200);
    expect(renewed.body.expiresAt).toBeGreaterThan(lease.expiresAt);

    const devices = (await api('GET', '/v1/devices')).body.devices as Json[];
    expect(devices.find((d) => d.id === lease.deviceId)).toMatchObject({ leased: true, leaseId: lease.id });

    const released = await api('DELETE', `/v1/leases/${lease.id}`);
    expect(released.status).toBe(200);
    expect(released.body.lease.state).toBe('released');
    expect(released.body.teardown.actions).toContain('closed android-snapshot-helper session');
    expect(released.body.teardown.actions).toContainEqual(
      expect.stringMatching(`^closed adb endpoint ${adb.body.endpoint} `),
    );
    expect(released.body.teardown.failures).toEqual([]);
    expect(await bridge.node.adb.client.listForwards()).toEqual([]);
    const after = (await api('GET', '/v1/devices')).body.devices as Json[];
    expect(after.find((d) => d.id === lease.deviceId)).toMatchObject({ leased: false });

    // The history of ended leases: the release above, newest first, with its teardown record.
    const history = await api('GET', '/v1/teardowns?limit=5');
    expect(history.status).toBe(200);
    expect(history.body.teardowns[0]).toEqual({
      lease: { ...released.body.lease },
      teardown: released.body.teardown,
    });
  });

  it('over a real listening server a snapshot is one body with its Content-Length (not chunked)', async () => {
    const acquired = await api('POST', '/v1/leases', { selector: { labels: { simulated: 'true' } } });
    expect(acquired.status).toBe(201);
    const server = await listenApp(bridge.app);
    try {
      for (const format of ['json', 'xml']) {
        const res = await fetch(`${server.url}/v1/leases/${acquired.body.id}/snapshot`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ format, transport: 'one-shot' }),
        });
        const bytes = Buffer.from(await res.arrayBuffer());
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/json');
        expect(res.headers.get('transfer-encoding')).toBeNull();
        expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
        const view = JSON.parse(bytes.toString('utf8'));
        expect(view.format).toBe(format);
        expect(bytes.toString('utf8')).toBe(JSON.stringify(view));
      }
    } finally {
      await server.close();
      await api('DELETE', `/v1/leases/${acquired.body.id}`);
    }
  });

  it('waitSeconds: a queued request gets the device when it frees (201)', async () => {
    const a = await api('POST', '/v1/leases', { ttlSeconds: 60 });
    const b = await api('POST', '/v1/leases', { ttlSeconds: 60 });
    expect([a.status, b.status]).toEqual([201, 201]);
    const none = await api('POST', '/v1/leases', { waitSeconds: 0 });
    expect(none.status).toBe(409);
    expect(none.body.error).toMatchObject({ code: 'CONFLICT', retryable: true });
    expect((await api('GET', '/v1/waiters')).body).toEqual({ waiters: [] });
    const sentAt = performance.now();
    const waiting = api('POST', '/v1/leases', { waitSeconds: 10 });
    // The waiter is listed with its place and how long it waited: for its tenant and admins only.
    const listed = await waitFor(
      async () => {
        const answer = await api('GET', '/v1/waiters');
        return answer.body.waiters?.length > 0 ? answer : null;
      },
      { what: 'the queued request to be listed' },
    );
    const listedAt = performance.now();
    expect(listed.status).toBe(200);
    expect(listed.body.waiters).toHaveLength(1);
    expect(listed.body.waiters[0]).toMatchObject({
      selector: {},
      tenant: 'acme',
      position: 1,
      node: bridge.node.name,
    });
    // How long it waited: never more than since the request was sent (1 ms for rounding).
    expect(listed.body.waiters[0].waitingMs).toBeGreaterThanOrEqual(0);
    expect(listed.body.waiters[0].waitingMs).toBeLessThanOrEqual(listedAt - sentAt + 1);
    expect(listed.body.waiters[0].waiterId).toMatch(/^waiter_/);
    expect((await call(bridge, OTHER_TENANT_TOKEN)('GET', '/v1/waiters')).body).toEqual({ waiters: [] });
    expect((await call(bridge, ADMIN_TOKEN)('GET', '/v1/waiters')).body.waiters).toHaveLength(1);
    await api('DELETE', `/v1/leases/${a.body.id}`);
    const got = await waiting;
    expect(got.status).toBe(201);
    expect(got.body.deviceId).toBe(a.body.deviceId);
    expect(got.body.fencingToken).toBeGreaterThan(a.body.fencingToken);
    expect((await api('GET', '/v1/waiters')).body).toEqual({ waiters: [] });
    await api('DELETE', `/v1/leases/${b.body.id}`);
    await api('DELETE', `/v1/leases/${got.body.id}`);
  });

  it('documents the lease routes in the OpenAPI document', async () => {
    const doc = (await api('GET', '/v1/openapi.json')).body;
    for (const p of [
      '/v1/devices',
      '/v1/devices/{id}',
      '/v1/leases',
      '/v1/leases/{id}',
      '/v1/leases/{id}/renew',
      '/v1/leases/{id}/helpers/{name}/ensure',
      '/v1/leases/{id}/snapshot',
      '/v1/leases/{id}/viewport',
      '/v1/leases/{id}/gestures',
      '/v1/waiters',
    ]) {
      expect(doc.paths, p).toHaveProperty([p]);
    }
    expect(doc.paths['/v1/leases'].post.responses).toHaveProperty('409');
  });
});

describe('leases: errors', () => {
  let bridge: DeviceBridge;
  let api: ReturnType<typeof call>;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens(), simulate: 1 });
    api = call(bridge, CLIENT_TOKEN);
  });
  afterAll(async () => bridge?.cleanup());

  it('404 with the selector echoed when nothing matches at all', async () => {
    const res = await api('POST', '/v1/leases', { selector: { labels: { os: 'ios' } } });
    expect(res.status).toBe(404);
    expect(res.body.error.details.selector).toEqual({ labels: { os: 'ios' } });
  });

  it('a __proto__ label in a selector is refused at the JSON boundary, naming the key (never dropped)', async () => {
    const res = await bridge.app.request('/v1/leases', {
      method: 'POST',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/json' },
      body: '{"selector":{"labels":{"__proto__":"x"}}}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.message).toContain('__proto__');
  });

  it('renew and ensure read their optional bodies through the route schema: a bad field is 400 naming it, no body is the defaults', async () => {
    const lease = (await api('POST', '/v1/leases', { ttlSeconds: 60 })).body;
    const renewPath = `/v1/leases/${lease.id}/renew`;
    const ensurePath = `/v1/leases/${lease.id}/helpers/android-snapshot-helper/ensure`;
    const badTtl = await api('POST', renewPath, { ttlSeconds: 'long' });
    expect(badTtl.status).toBe(400);
    expect(badTtl.body.error.message).toMatch(/^invalid body field ttlSeconds: /);
    const badPolicy = await api('POST', ensurePath, { policy: 'sometimes' });
    expect(badPolicy.status).toBe(400);
    expect(badPolicy.body.error.message).toMatch(/^invalid body field policy: /);
    // No body at all: the lease's own TTL again, the default policy.
    const renewed = await api('POST', renewPath);
    expect(renewed.status).toBe(200);
    expect(renewed.body.ttlSeconds).toBe(60);
    const ensured = await api('POST', ensurePath);
    expect(ensured.status).toBe(200);
    expect(ensured.body).toMatchObject({ before: 'missing', action: 'installed' });
    await api('DELETE', `/v1/leases/${lease.id}`);
  });

  it('teardown history: a limit outside 1–100 or an unknown parameter is 400 naming it', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'since=1']) {
      const res = await api('GET', `/v1/teardowns?${query}`);
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(res.body.error), query).toContain(query.split('=')[0] as string);
    }
  });

  it('400s naming the field', async () => {
    expect((await api('POST', '/v1/leases', { ttlSeconds: 99999 })).body.error).toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    const typed = await api('POST', '/v1/leases', { selector: { sdkMin: 'x' } });
    expect(typed.status).toBe(400);
    // The message names the part of the request a user wrote (not the validator's "json" target).
    expect(typed.body.error.message).toMatch(/^invalid body field selector\.sdkMin: /);
    expect((await api('POST', '/v1/leases', { bogus: true })).status).toBe(400);
    const lease = (await api('POST', '/v1/leases', {})).body;
    const bad = await api('POST', `/v1/leases/${lease.id}/gestures`, {
      kind: 'plan',
      plan: { kind: 'swipe', durationMs: 10, pointers: [] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/pointers/);
    expect((await api('POST', `/v1/leases/${lease.id}/gestures`, { kind: 'teleport' })).status).toBe(400);
    expect((await api('POST', `/v1/leases/${lease.id}/snapshot`, { maxNodes: -1 })).status).toBe(400);
    await api('DELETE', `/v1/leases/${lease.id}`);
  });

  it('a released lease is 410 for operations; unknown leases are 404', async () => {
    const lease = (await api('POST', '/v1/leases', {})).body;
    await api('DELETE', `/v1/leases/${lease.id}`);
    const op = await api('POST', `/v1/leases/${lease.id}/snapshot`, {});
    expect(op.status).toBe(410);
    expect(op.body.error.code).toBe('LEASE_EXPIRED');
    expect((await api('GET', `/v1/leases/${lease.id}`)).body.state).toBe('released');
    expect((await api('GET', '/v1/leases/lease_doesnotexist')).status).toBe(404);
  });

  it('fencing: after expiry and re-lease the old lease and its token are refused', async () => {
    const first = (await api('POST', '/v1/leases', { ttlSeconds: 1 })).body;
    const until = Date.now() + 10_000;
    let second: Json | undefined;
    while (!second && Date.now() < until) {
      const r = await api('POST', '/v1/leases', { ttlSeconds: 60 });
      if (r.status === 201) second = r.body;
      else await new Promise((res) => setTimeout(res, 200));
    }
    expect(second?.deviceId).toBe(first.deviceId);
    expect(second!.fencingToken).toBeGreaterThan(first.fencingToken);
    const stale = await api('POST', `/v1/leases/${first.id}/snapshot`, {});
    expect(stale.status).toBe(410);
    const staleToken = await api(
      'POST',
      `/v1/leases/${second!.id}/snapshot`,
      {},
      { 'X-Fencing-Token': String(first.fencingToken) },
    );
    expect(staleToken.status).toBe(410);
    expect(staleToken.body.error.message).toMatch(/stale/);
    const teardown = await bridge.node.leases.store.getTeardown(first.id);
    expect(teardown).toMatchObject({ reason: 'expired', failures: [] });
    await api('DELETE', `/v1/leases/${second!.id}`);
  });
});

describe('leases and devices: security', () => {
  let bridge: DeviceBridge;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens(), simulate: 1 });
  });
  afterAll(async () => bridge?.cleanup());

  it('401 without a token, 403 for clients on admin routes', async () => {
    const anon = call(bridge, null);
    expect((await anon('GET', '/v1/devices')).status).toBe(401);
    expect((await anon('POST', '/v1/leases', {})).status).toBe(401);
    const client = call(bridge, CLIENT_TOKEN);
    expect((await client('POST', '/v1/devices', { endpoint: '127.0.0.1:5999' })).status).toBe(403);
    expect((await client('DELETE', '/v1/devices/127.0.0.1-5999')).status).toBe(403);
  });

  it("another tenant's lease is 404, not 403; admins see every lease", async () => {
    const mine = call(bridge, CLIENT_TOKEN);
    const theirs = call(bridge, OTHER_TENANT_TOKEN);
    const lease = (await mine('POST', '/v1/leases', {})).body;
    for (const [method, path] of [
      ['GET', `/v1/leases/${lease.id}`],
      ['POST', `/v1/leases/${lease.id}/snapshot`],
      ['DELETE', `/v1/leases/${lease.id}`],
      ['POST', `/v1/leases/${lease.id}/renew`],
    ] as const) {
      const res = await theirs(method, path, method === 'POST' ? {} : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await theirs('GET', '/v1/leases')).body.leases).toEqual([]);
    const devices = (await theirs('GET', '/v1/devices')).body.devices as Json[];
    expect(devices[0]).toMatchObject({ leased: true, leaseId: null });
    expect(
      (await call(bridge, ADMIN_TOKEN)('GET', '/v1/leases')).body.leases.map((l: Json) => l.id),
    ).toContain(lease.id);
    await mine('DELETE', `/v1/leases/${lease.id}`);
    // Teardown history: the tenant's own and the admin's view hold it; the other tenant's does not.
    const ids = (rows: Json[]) => rows.map((r) => r.lease.id);
    expect(ids((await mine('GET', '/v1/teardowns')).body.teardowns)).toContain(lease.id);
    expect(ids((await theirs('GET', '/v1/teardowns')).body.teardowns)).not.toContain(lease.id);
    expect(ids((await call(bridge, ADMIN_TOKEN)('GET', '/v1/teardowns')).body.teardowns)).toContain(lease.id);
    expect((await call(bridge, null)('GET', '/v1/teardowns')).status).toBe(401);
  });

  it('refuses tunnels outside the allowlist without connecting, and removes devices only when free', async () => {
    const admin = call(bridge, ADMIN_TOKEN);
    const refused = await admin('POST', '/v1/devices', { endpoint: '10.1.2.3:5555' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('10.1.2.3');
    const id = (await admin('GET', '/v1/devices')).body.devices[0].id;
    const lease = (await call(bridge, CLIENT_TOKEN)('POST', '/v1/leases', {})).body;
    expect((await admin('DELETE', `/v1/devices/${id}`)).status).toBe(409);
    await call(bridge, CLIENT_TOKEN)('DELETE', `/v1/leases/${lease.id}`);
  });
});

describe('leases on Redis through HTTP', () => {
  let bridge: DeviceBridge;
  const prefix = `test:${randomUUID()}:`;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ redisPrefix: prefix, simulate: 1 });
  });
  afterAll(async () => {
    await bridge?.cleanup();
    const { Redis } = await import('ioredis');
    const redis = new Redis('redis://127.0.0.1:6379');
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('acquires, snapshots and releases with the Redis stores', async () => {
    const api = call(bridge, null);
    const lease = await api('POST', '/v1/leases', {});
    expect(lease.status).toBe(201);
    expect((await api('POST', '/v1/leases', {})).status).toBe(409);
    const snap = await api('POST', `/v1/leases/${lease.body.id}/snapshot`, { transport: 'one-shot' });
    expect(snap.status).toBe(200);
    expect(snap.body.snapshot.nodeCount).toBeGreaterThan(10);
    // The snapshot installed the helper on the way: the device view (in Redis) names the release.
    const device = ((await api('GET', '/v1/devices')).body.devices as Json[]).find(
      (d) => d.id === lease.body.deviceId,
    );
    expect(device?.helpers['android-snapshot-helper']).toMatchObject({ versionCode: 2, version: '0.2.0' });
    const released = await api('DELETE', `/v1/leases/${lease.body.id}`);
    expect(released.body.lease.state).toBe('released');
    // The Redis store's teardown history holds it.
    expect((await api('GET', '/v1/teardowns?limit=1')).body.teardowns).toEqual([released.body]);
    expect((await api('POST', '/v1/leases', {})).status).toBe(201);
  });
});

describe('leases: contract', () => {
  it('the answers above covered every lease route, and each parsed with its response schema', () => {
    const all = LEASE_ROUTES.map((r) => r.operationId).sort();
    expect([...checkedOperations].sort()).toEqual(all);
  });
});
