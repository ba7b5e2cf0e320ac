/**
 * Tenant quotas: one tenant cannot hold every device or fill the waiting queue in front of others.
 * A tenant past its lease quota is refused a new lease (429 naming the quota) while another tenant
 * still gets one; past its waiter quota, joining the queue is refused and another tenant's waiter
 * stands right behind the capped ones, not behind everything the first could have queued.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator, hashToken } from '../../src/auth/tokens.ts';
import { CLIENT_TOKEN, type DeviceBridge, OTHER_TENANT_TOKEN, testDeviceBridge } from '../support/bridge.ts';

// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field below
type Json = Record<string, any>;

let bridge: DeviceBridge;
beforeAll(async () => {
  const auth = new Authenticator([
    {
      name: 'ci',
      tenant: 'acme',
      role: 'client',
      sha256: hashToken(CLIENT_TOKEN),
      quota: { leases: 1, waiters: 3 },
    },
    { name: 'other', tenant: 'globex', role: 'client', sha256: hashToken(OTHER_TENANT_TOKEN) },
  ]);
  bridge = await testDeviceBridge({ auth, simulate: 2 });
});
afterAll(async () => bridge?.cleanup());

function call(token: string, method: string, path: string, body?: unknown, signal?: AbortSignal) {
  return Promise.resolve(
    bridge.app.request(path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal === undefined ? {} : { signal }),
    }),
  ).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }));
}

async function waitersOf(tenant: string): Promise<Array<{ tenant: string; position: number }>> {
  const res = await call(tenant === 'acme' ? CLIENT_TOKEN : OTHER_TENANT_TOKEN, 'GET', '/v1/waiters');
  return res.body['waiters'];
}

describe('tenant quotas', () => {
  it("past its lease quota a tenant is refused (429 naming it); another tenant's lease is granted", async () => {
    const first = await call(CLIENT_TOKEN, 'POST', '/v1/leases', { ttlSeconds: 120 });
    expect(first.status).toBe(201);
    const second = await call(CLIENT_TOKEN, 'POST', '/v1/leases', { ttlSeconds: 120 });
    expect(second.status).toBe(429);
    expect(second.body['error']).toMatchObject({
      code: 'RATE_LIMITED',
      details: { quota: 'leases', limit: 1 },
    });
    expect(second.body['error'].message).toContain('its quota is 1');
    const other = await call(OTHER_TENANT_TOKEN, 'POST', '/v1/leases', { ttlSeconds: 120 });
    expect(other.status).toBe(201);
    // Released, the quota has room again.
    expect((await call(CLIENT_TOKEN, 'DELETE', `/v1/leases/${first.body['id']}`)).status).toBe(200);
    const again = await call(CLIENT_TOKEN, 'POST', '/v1/leases', { ttlSeconds: 120 });
    expect(again.status).toBe(201);
    await call(CLIENT_TOKEN, 'DELETE', `/v1/leases/${again.body['id']}`);
    await call(OTHER_TENANT_TOKEN, 'DELETE', `/v1/leases/${other.body['id']}`);
  });

  it("past its waiter quota a tenant cannot queue; another tenant's waiter stands right behind", async () => {
    // globex holds both devices: everyone else waits.
    const held = [
      await call(OTHER_TENANT_TOKEN, 'POST', '/v1/leases', { ttlSeconds: 120 }),
      await call(OTHER_TENANT_TOKEN, 'POST', '/v1/leases', { ttlSeconds: 120 }),
    ];
    expect(held.map((h) => h.status)).toEqual([201, 201]);
    const stop = new AbortController();
    const waiting: Promise<unknown>[] = [];
    try {
      // acme's workers queue (the lease quota counts leases held, not waiting), up to its quota of 3.
      for (let i = 0; i < 3; i++) {
        waiting.push(
          call(CLIENT_TOKEN, 'POST', '/v1/leases', { waitSeconds: 60 }, stop.signal).catch(() => null),
        );
        for (let tries = 0; (await waitersOf('acme')).length < i + 1; tries++) {
          expect(tries).toBeLessThan(200);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      const refused = await call(CLIENT_TOKEN, 'POST', '/v1/leases', { waitSeconds: 60 });
      expect(refused.status).toBe(429);
      expect(refused.body['error']).toMatchObject({ details: { quota: 'waiters', limit: 3 } });

      waiting.push(
        call(OTHER_TENANT_TOKEN, 'POST', '/v1/leases', { waitSeconds: 60 }, stop.signal).catch(() => null),
      );
      let mine: { position: number } | undefined;
      for (let tries = 0; mine === undefined; tries++) {
        expect(tries).toBeLessThan(200);
        mine = (await waitersOf('globex'))[0];
        if (mine === undefined) await new Promise((r) => setTimeout(r, 20));
      }
      expect(mine.position).toBe(4);
    } finally {
      stop.abort();
      await Promise.all(waiting);
      for (const h of held) await call(OTHER_TENANT_TOKEN, 'DELETE', `/v1/leases/${h.body['id']}`);
    }
  });
});
