/**
 * Console sessions across a fleet: two real `serve` processes with tokens on one Redis key prefix.
 * A session opened on node B is honoured on node A (pages and the API, with the same CSRF token);
 * a console-initiated lease-scoped call on B for A's device is forwarded to A with the session and
 * succeeds there; signing out on A ends the session on B too.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_TOKEN, tempDir, writeTokensFile } from '../support/bridge.ts';
import { publishFixtureHelper } from '../support/cli.ts';
import { deleteKeys, REDIS_URL, type ServeNode, startServeNode, stopServeNode } from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;

describe('console sessions across nodes (e2e, one Redis)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  let a: ServeNode;
  let b: ServeNode;

  beforeAll(async () => {
    tmp = await tempDir();
    const env = { DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(tmp.dir) };
    // The owner (A) installs the snapshot helper for gestures: publish it into A's artifact store.
    await publishFixtureHelper(`${tmp.dir}/a`);
    [a, b] = await Promise.all([
      startServeNode({ dataDir: `${tmp.dir}/a`, name: 'node-a', simulate: 1, prefix, env }),
      startServeNode({ dataDir: `${tmp.dir}/b`, name: 'node-b', simulate: 0, prefix, env }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((n) => stopServeNode(n)));
    const redis = new Redis(REDIS_URL);
    await deleteKeys(redis, prefix);
    await redis.quit();
    await tmp?.cleanup();
  }, 60_000);

  /** A call with the session cookie (and the CSRF token when given), as the console's script makes it. */
  const withSession =
    (base: string, cookie: string, csrf?: string) => async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        redirect: 'manual',
        headers: {
          Cookie: cookie,
          ...(csrf === undefined ? {} : { 'X-CSRF-Token': csrf }),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
      let json: any = null;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: res.status, json, text, headers: res.headers };
    };

  it('sign in on B, use the session on A; a lease-scoped call on B is forwarded to A with it', async () => {
    const signIn = await fetch(`${b.url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: CLIENT_TOKEN }).toString(),
    });
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^devicebridge_session=[A-Za-z0-9_-]{43}$/);

    // Node A renders the page for B's session, with the session's CSRF token.
    const pageA = await withSession(a.url, cookie)('GET', '/console/leases');
    expect(pageA.status).toBe(200);
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(pageA.text)?.[1];
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const pageB = await withSession(b.url, cookie)('GET', '/console/devices');
    expect(pageB.text).toContain(`content="${csrf}"`);

    const onA = withSession(a.url, cookie, csrf);
    const onB = withSession(b.url, cookie, csrf);
    // State changes need the CSRF token on either node.
    expect((await withSession(a.url, cookie)('POST', '/v1/leases', {})).status).toBe(403);
    const lease = await onA('POST', '/v1/leases', { ttlSeconds: 120 });
    expect(lease.status, JSON.stringify(lease.json)).toBe(201);
    expect(lease.json.tenant).toBe('acme');

    // B does not drive the device: it forwards to A, cookie and CSRF token included.
    const tap = await onB('POST', `/v1/leases/${lease.json.id}/gestures`, { kind: 'tap', x: 10, y: 10 });
    expect(tap.status, JSON.stringify(tap.json)).toBe(200);
    expect(tap.headers.get('x-devicebridge-forwarded-by')).toBe('node-a');
    expect(tap.json.injectedEvents).toBeGreaterThan(0);
    const viewport = await onB('GET', `/v1/leases/${lease.json.id}/viewport`);
    expect(viewport.status, JSON.stringify(viewport.json)).toBe(200);
    expect(viewport.headers.get('x-devicebridge-forwarded-by')).toBe('node-a');
    // Without the CSRF token the forwarded call is refused (B refuses it before forwarding).
    const noCsrf = await withSession(b.url, cookie)('POST', `/v1/leases/${lease.json.id}/gestures`, {
      kind: 'tap',
      x: 10,
      y: 10,
    });
    expect(noCsrf.status).toBe(403);

    const released = await onB('DELETE', `/v1/leases/${lease.json.id}`);
    expect(released.status, JSON.stringify(released.json)).toBe(200);

    // Signing out on A ends the session everywhere.
    const out = await fetch(`${a.url}/console/sign-out`, {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrf! }).toString(),
    });
    expect(out.status).toBe(303);
    expect((await onB('GET', '/v1/leases')).status).toBe(401);
    expect((await withSession(b.url, cookie)('GET', '/console/devices')).status).toBe(302);
  }, 90_000);
});
