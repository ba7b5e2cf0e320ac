/**
 * Scale-out and the HTTP edge (issue #10): a lease-scoped call for a device driven by another node is
 * forwarded only for an authenticated caller of the lease's tenant. Two bridges share a Redis key
 * prefix: node A drives a simulated device and listens on a real socket; node B drives nothing and
 * is asked through app.request().
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePublicKey } from '../support/adb-keys.ts';
import {
  ADB_TOKEN,
  CLIENT_TOKEN,
  type DeviceBridge,
  OTHER_TENANT_TOKEN,
  SHELL_TOKEN,
  testDeviceBridge,
  testTokens,
  timedRequest,
} from '../support/bridge.ts';
import { deleteKeys, REDIS_URL } from '../support/fleet.ts';

const FORWARDED = 'x-devicebridge-forwarded-by';

/**
 * node-a (drives one simulated device; its directory entry points at loopback `ownerPort`, a stand-in
 * for a broken owner) and node-b (no devices, forward timeout 500 ms) on one Redis prefix, with a
 * lease of node-a's device acquired through node-b.
 */
async function ownerBehind(
  redisPrefix: string,
  ownerPort: number,
  forwardTimeoutMs = 500,
): Promise<{ a: DeviceBridge; b: DeviceBridge; leaseId: string }> {
  const a = await testDeviceBridge({ simulate: 1, redisPrefix, env: { DEVICEBRIDGE_NODE: 'node-a' } });
  await a.node.announce(`http://127.0.0.1:${ownerPort}`);
  const b = await testDeviceBridge({
    simulate: 0,
    redisPrefix,
    env: { DEVICEBRIDGE_NODE: 'node-b', DEVICEBRIDGE_FORWARD_TIMEOUT_MS: String(forwardTimeoutMs) },
  });
  const acquired = await timedRequest(b.app, 'POST', '/v1/leases', { waitSeconds: 5 });
  expect(acquired.status, JSON.stringify(acquired.body)).toBe(201);
  return { a, b, leaseId: acquired.body['id'] };
}

async function dropKeys(keyPrefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  await deleteKeys(redis, keyPrefix);
  await redis.quit();
}
const prefix = `test:${randomUUID()}:`;

describe('owner proxy: security', () => {
  let a: DeviceBridge;
  let b: DeviceBridge;
  let server: ServerType;
  let leaseId: string;

  beforeAll(async () => {
    a = await testDeviceBridge({
      auth: testTokens({ withShell: true, withAdb: true }),
      simulate: 1,
      redisPrefix: prefix,
      env: { DEVICEBRIDGE_NODE: 'node-a' },
    });
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: a.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    await a.node.announce(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    b = await testDeviceBridge({
      auth: testTokens({ withShell: true, withAdb: true }),
      simulate: 0,
      redisPrefix: prefix,
      env: { DEVICEBRIDGE_NODE: 'node-b' },
    });
    const acquired = await b.app.request('/v1/leases', {
      method: 'POST',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ selector: {}, waitSeconds: 5 }),
    });
    expect(acquired.status, await acquired.clone().text()).toBe(201);
    leaseId = ((await acquired.json()) as { id: string }).id;
  }, 120_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await b?.cleanup();
    await a?.cleanup();
    await dropKeys(prefix);
  });

  it('the lease owner tenant is forwarded to the node that drives the device', async () => {
    const res = await b.app.request(`/v1/leases/${leaseId}/viewport?transport=one-shot`, {
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}` },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get(FORWARDED)).toBe('node-a');
  });

  it('a forwarded body is streamed to the owner, under the route limit (413 when it streams past it)', async () => {
    const snapshot = await b.app.request(`/v1/leases/${leaseId}/snapshot`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ format: 'xml', transport: 'one-shot' }),
    });
    expect(snapshot.status, await snapshot.clone().text()).toBe(200);
    expect(snapshot.headers.get(FORWARDED)).toBe('node-a');
    expect(((await snapshot.json()) as { xml: string }).xml).toContain('</hierarchy>');

    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let sent = 0;
    const oversized = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"kind":"tap","x":1,"y":1'));
        if (sent >= 4 * 1024 * 1024) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await b.app.request(`/v1/leases/${leaseId}/gestures`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/json' },
      body: oversized,
      duplex: 'half',
    } as RequestInit);
    expect(res.status, await res.clone().text()).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(sent).toBeLessThan(4 * 1024 * 1024);
  });

  it('a call needing a capability the token lacks is refused where it arrives, never forwarded; with it, forwarded', async () => {
    const open = (token: string) =>
      b.app.request(`/v1/leases/${leaseId}/adb`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ publicKey: fixturePublicKey }),
      });
    for (const token of [CLIENT_TOKEN, SHELL_TOKEN]) {
      const refused = await open(token);
      expect(refused.status).toBe(403);
      expect(refused.headers.get(FORWARDED)).toBeNull();
      const body = (await refused.json()) as { error: { code: string; details: unknown } };
      expect(body.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { capability: 'adb' } });
      expect(JSON.stringify(body)).not.toContain('node-a');
    }
    const opened = await open(ADB_TOKEN);
    expect(opened.status, await opened.clone().text()).toBe(200);
    expect(opened.headers.get(FORWARDED)).toBe('node-a');
    expect(((await opened.json()) as { leaseId: string }).leaseId).toBe(leaseId);
  });

  it('never forwards an unauthenticated or other-tenant call: answered locally, no trace of the owner', async () => {
    for (const [headers, status] of [
      [{}, 401],
      [{ Authorization: 'Bearer not-a-token' }, 401],
      [{ Authorization: `Bearer ${OTHER_TENANT_TOKEN}` }, 404],
    ] as const) {
      for (const [method, path, body] of [
        ['GET', `/v1/leases/${leaseId}/viewport`, undefined],
        ['POST', `/v1/leases/${leaseId}/snapshot`, '{"format":"xml"}'],
        ['POST', `/v1/leases/${leaseId}/gestures`, '{"kind":"tap","x":1,"y":1}'],
        ['POST', `/v1/leases/${leaseId}/helpers/android-snapshot-helper/ensure`, '{}'],
      ] as const) {
        const res = await b.app.request(path, {
          method,
          headers: { ...headers, ...(body ? { 'Content-Type': 'application/json' } : {}) },
          ...(body ? { body } : {}),
        });
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(status);
        expect(res.headers.get(FORWARDED), `${method} ${path}`).toBeNull();
        expect(await res.text()).not.toContain('node-a');
      }
    }
  });
});

describe('owner proxy: an owner that does not answer', () => {
  const silentPrefix = `test:${randomUUID()}:`;
  let a: DeviceBridge;
  let b: DeviceBridge;
  let silent: Server;
  const sockets = new Set<Socket>();
  let leaseId: string;

  beforeAll(async () => {
    // The owner's directory entry points at a socket that accepts and never answers (a hung node).
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    ({ a, b, leaseId } = await ownerBehind(silentPrefix, (silent.address() as AddressInfo).port));
  }, 120_000);

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => silent?.close(() => resolve()));
    await b?.cleanup();
    await a?.cleanup();
    await dropKeys(silentPrefix);
  });

  it('a forwarded call times out into a retryable UNAVAILABLE naming the owner (not a hang, not a 500)', async () => {
    const res = await timedRequest(b.app, 'GET', `/v1/leases/${leaseId}/viewport?transport=one-shot`);
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(res.body['error']).toMatchObject({
      code: 'UNAVAILABLE',
      retryable: true,
      details: { ownerNode: 'node-a' },
    });
    expect(res.body['error'].message).toContain('node-a');
    // Ended by the forward's own timeout (named in the answer), not by the test's.
    expect(res.body['error'].message).toContain('within 500 ms');
  }, 15_000);
});

describe('owner proxy: an owner whose answer is lost', () => {
  const lostPrefix = `test:${randomUUID()}:`;
  let a: DeviceBridge;
  let b: DeviceBridge;
  let lost: Server;
  let leaseId: string;
  let ownerRelease: Promise<{ status: number }> | undefined;

  beforeAll(async () => {
    // The owner's directory entry points at a socket that, on the forwarded request, has node-a
    // release the lease and only then drops the connection: the owner did the work, its answer is
    // lost. Node-b's forward deadline is long, so only the dropped connection ends its forward.
    lost = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => {
        ownerRelease = timedRequest(a.app, 'DELETE', `/v1/leases/${leaseId}`).finally(() => socket.destroy());
      });
    });
    await new Promise<void>((resolve) => lost.listen(0, '127.0.0.1', resolve));
    ({ a, b, leaseId } = await ownerBehind(lostPrefix, (lost.address() as AddressInfo).port, 60_000));
  }, 120_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => lost?.close(() => resolve()));
    await b?.cleanup();
    await a?.cleanup();
    await dropKeys(lostPrefix);
  });

  it('a release the owner ran but whose answer was lost is answered 200 with the teardown, not LEASE_EXPIRED', async () => {
    const res = await timedRequest(b.app, 'DELETE', `/v1/leases/${leaseId}`);
    expect((await ownerRelease)?.status).toBe(200);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body['lease']).toMatchObject({ id: leaseId, state: 'released' });
    expect(res.body['teardown']).toMatchObject({ leaseId, reason: 'released' });
    // Only a lost answer is healed: a later release of the ended lease is still LEASE_EXPIRED.
    const again = await timedRequest(b.app, 'DELETE', `/v1/leases/${leaseId}`);
    expect(again.status, JSON.stringify(again.body)).toBe(410);
  }, 30_000);
});

describe('owner proxy: an owner that hangs after its headers', () => {
  const hungPrefix = `test:${randomUUID()}:`;
  let a: DeviceBridge;
  let b: DeviceBridge;
  let hung: HttpServer;
  let leaseId: string;

  beforeAll(async () => {
    // A real HTTP server in the owner's directory entry: it sends 200, its headers and a first
    // chunk, then stalls (a hung node whose socket stays open).
    hung = createHttpServer((req, res) => {
      if (req.url?.endsWith('/shell/stream')) {
        // A streamed shell command that is quiet for longer than the forward timeout, then exits.
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write('{"stream":"stdout","data":"YQ=="}\n');
        setTimeout(() => res.end('{"exit":0,"durationMs":1200}\n'), 1200);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"width":');
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    ({ a, b, leaseId } = await ownerBehind(hungPrefix, (hung.address() as AddressInfo).port));
  }, 120_000);

  afterAll(async () => {
    hung?.closeAllConnections();
    await new Promise<void>((resolve) => hung?.close(() => resolve()));
    await b?.cleanup();
    await a?.cleanup();
    await dropKeys(hungPrefix);
  });

  it('a streamed shell command quiet for longer than the forward timeout is relayed to its exit event', async () => {
    const res = await b.app.request(`/v1/leases/${leaseId}/shell/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ argv: ['sleep', '1'] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get(FORWARDED)).toBe('node-a');
    const text = await res.text();
    expect(text).toContain('{"exit":0');
  }, 15_000);

  it('the relayed body ends with an error once the owner sends nothing for the forward timeout (not a hang)', async () => {
    const res = await b.app.request(`/v1/leases/${leaseId}/viewport?transport=one-shot`);
    expect(res.status).toBe(200);
    expect(res.headers.get(FORWARDED)).toBe('node-a');
    const outcome = await Promise.race([
      res.text().then(
        (text) => ({ kind: 'ended', text }),
        (err: unknown) => ({ kind: 'aborted', text: String((err as Error).message ?? err) }),
      ),
      new Promise<{ kind: string; text: string }>((resolve) =>
        setTimeout(() => resolve({ kind: 'hung', text: '' }), 8000),
      ),
    ]);
    // Cut by the relay's idle timer (named in the reason), not left hanging.
    expect(outcome.kind, outcome.text).toBe('aborted');
    expect(outcome.text).toContain('sent nothing for 500 ms');
  }, 30_000);
});
