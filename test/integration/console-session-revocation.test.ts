/**
 * A console session stands for its token as the tokens file names it now, not as it named it at
 * sign-in. Apps built over one real Redis session store (random key prefix), as a node restarted or
 * another node of the fleet: sign in on one, then rebuild with a tokens file that lacks the token, or
 * gives it another role or tenant, and send the cookie again.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSessions } from '../../src/auth/console-sessions.ts';
import { RedisSessionStore } from '../../src/auth/redis-session-store.ts';
import { Authenticator, hashToken } from '../../src/auth/tokens.ts';
import { ADMIN_TOKEN, CLIENT_TOKEN, type TestBridge, tempDir, testBridge } from '../support/bridge.ts';
import { deleteKeys, REDIS_URL } from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;
const redis = new Redis(REDIS_URL);

interface Entry {
  name: string;
  tenant: string;
  role: 'admin' | 'client';
  token: string;
}
const ops: Entry = { name: 'ops', tenant: 'acme', role: 'admin', token: ADMIN_TOKEN };
const ci: Entry = { name: 'ci', tenant: 'acme', role: 'client', token: CLIENT_TOKEN };

describe('console sessions follow the tokens file (real Redis, apps rebuilt)', () => {
  let tmp: { dir: string; cleanup(): Promise<void> };
  const bridges: TestBridge[] = [];
  const sessionsOpened: ConsoleSessions[] = [];

  beforeAll(async () => {
    tmp = await tempDir();
  });
  afterAll(async () => {
    for (const b of bridges) await b.cleanup();
    for (const s of sessionsOpened) await s.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
    await tmp?.cleanup();
  });

  /** An app (a node, or the same node restarted) over the shared Redis store with these tokens. */
  const node = async (entries: Entry[]): Promise<TestBridge> => {
    const file = path.join(tmp.dir, `tokens-${randomUUID()}.json`);
    await writeFile(
      file,
      JSON.stringify(
        entries.map((e) => ({ name: e.name, tenant: e.tenant, role: e.role, sha256: hashToken(e.token) })),
      ),
    );
    const consoleSessions = new ConsoleSessions({
      store: new RedisSessionStore({ url: REDIS_URL, prefix }),
    });
    sessionsOpened.push(consoleSessions);
    const bridge = await testBridge({ auth: Authenticator.fromFile(file), consoleSessions });
    bridges.push(bridge);
    return bridge;
  };

  const signIn = async (bridge: TestBridge, token: string): Promise<string> => {
    const body = new URLSearchParams({ token }).toString();
    const res = await bridge.app.request('/console/sign-in', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
    });
    expect(res.status).toBe(303);
    return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  };
  const get = async (bridge: TestBridge, route: string, cookie: string) =>
    (await bridge.app.request(route, { headers: { Cookie: cookie } })).status;
  const sessionKeys = async () => (await redis.keys(`${prefix}*`)).length;
  /** GET /v1/leases: 401 without a caller; an authenticated caller gets past the role check to 503 (this app has no device side). */
  const AUTHENTICATED = 503;

  it('the same tokens: the session is honoured after a rebuild (the control case)', async () => {
    const cookie = await signIn(await node([ops, ci]), CLIENT_TOKEN);
    const again = await node([ops, ci]);
    expect(await get(again, '/v1/leases', cookie)).toBe(AUTHENTICATED);
    expect(await get(again, '/console/devices', cookie)).toBe(200);
  });

  it('the token removed from the tokens file: the cookie is 401 and the session is gone', async () => {
    const first = await node([ops, ci]);
    const cookie = await signIn(first, CLIENT_TOKEN);
    expect(await get(first, '/v1/leases', cookie)).toBe(AUTHENTICATED);
    const before = await sessionKeys();

    const revoked = await node([ops]);
    expect(await get(revoked, '/v1/leases', cookie)).toBe(401);
    expect(await get(revoked, '/console/devices', cookie)).toBe(302);
    // Dropped from the store: putting the token back does not bring the session back.
    expect(await sessionKeys()).toBe(before - 1);
    expect(await get(await node([ops, ci]), '/v1/leases', cookie)).toBe(401);
  });

  it('the token demoted from admin to client: the session is dropped, its admin rights with it', async () => {
    const first = await node([ops, ci]);
    const cookie = await signIn(first, ADMIN_TOKEN);
    expect(await get(first, '/metrics', cookie)).toBe(200);

    const demoted = await node([{ ...ops, role: 'client' }, ci]);
    expect(await get(demoted, '/metrics', cookie)).toBe(401);
    expect(await get(demoted, '/v1/leases', cookie)).toBe(401);
    // Signing in again gives the token's current rights.
    const again = await signIn(demoted, ADMIN_TOKEN);
    expect(await get(demoted, '/v1/leases', again)).toBe(AUTHENTICATED);
    expect(await get(demoted, '/metrics', again)).toBe(403);
  });

  it('the token moved to another tenant, or the same hash under another name: the session is dropped', async () => {
    const cookie = await signIn(await node([ops, ci]), CLIENT_TOKEN);
    expect(await get(await node([ops, { ...ci, tenant: 'globex' }]), '/v1/leases', cookie)).toBe(401);
    const other = await signIn(await node([ops, ci]), CLIENT_TOKEN);
    expect(await get(await node([ops, { ...ci, name: 'ci-renamed' }]), '/v1/leases', other)).toBe(401);
  });

  it('the store holds neither the token nor the hash the tokens file holds', async () => {
    const cookie = await signIn(await node([ops, ci]), CLIENT_TOKEN);
    expect(cookie).toMatch(/^devicebridge_session=/);
    const values = await Promise.all((await redis.keys(`${prefix}*`)).map((k) => redis.get(k)));
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) {
      expect(v).not.toContain(CLIENT_TOKEN);
      expect(v).not.toContain(hashToken(CLIENT_TOKEN));
      expect(v).not.toContain(hashToken(ADMIN_TOKEN));
    }
  });
});
