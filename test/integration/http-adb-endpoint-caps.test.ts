/**
 * The adb endpoint caps hold under concurrent opens on one node: many `POST /v1/leases/{id}/adb` at
 * once, each with another client key, never leave a lease with more than its endpoints (409 naming
 * the limit) nor a tenant with more than its quota (429 naming `adbEndpoints`). Real adb server,
 * simulated devices, real keys from `adb keygen`.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENDPOINTS_PER_OWNER } from '../../src/adb/relay-endpoints.ts';
import { Authenticator, hashToken } from '../../src/auth/tokens.ts';
import { freshAdbPublicKeys } from '../support/adb-keys.ts';
import { ADB_TOKEN, type DeviceBridge, testDeviceBridge } from '../support/bridge.ts';

// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field below
type Json = Record<string, any>;

/** The tenant's quota of open adb endpoints on a node (below what three leases could hold). */
const QUOTA = 6;
const LEASES = 3;

let bridge: DeviceBridge;
let keys: string[];

beforeAll(async () => {
  const auth = new Authenticator([
    {
      name: 'ci-adb',
      tenant: 'acme',
      role: 'client',
      sha256: hashToken(ADB_TOKEN),
      capabilities: ['adb'],
      quota: { adbEndpoints: QUOTA },
    },
  ]);
  [bridge, keys] = await Promise.all([
    testDeviceBridge({ auth, simulate: LEASES }),
    freshAdbPublicKeys(2 * MAX_ENDPOINTS_PER_OWNER),
  ]);
}, 90_000);

afterAll(async () => bridge?.cleanup(), 60_000);

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await bridge.app.request(path, {
    method,
    headers: { Authorization: `Bearer ${ADB_TOKEN}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

async function acquire(): Promise<string> {
  const res = await call('POST', '/v1/leases', {
    selector: { labels: { simulated: 'true' } },
    ttlSeconds: 120,
  });
  expect(res.status).toBe(201);
  return res.body['id'] as string;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('adb endpoint caps under concurrent opens (one node)', () => {
  it(`one lease, ${2 * MAX_ENDPOINTS_PER_OWNER} keys at once: ${MAX_ENDPOINTS_PER_OWNER} endpoints, the rest 409 naming the limit`, async () => {
    const lease = await acquire();
    try {
      const answers = await Promise.all(
        keys.map((publicKey) => call('POST', `/v1/leases/${lease}/adb`, { publicKey })),
      );
      const opened = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status !== 200);
      expect(opened).toHaveLength(MAX_ENDPOINTS_PER_OWNER);
      for (const r of refused) {
        expect(r.status).toBe(409);
        expect(r.body['error']).toMatchObject({
          code: 'CONFLICT',
          details: { limit: MAX_ENDPOINTS_PER_OWNER },
        });
      }
      // Every endpoint answered is a distinct one that listens.
      const ports = new Set(opened.map((a) => a.body['port'] as number));
      expect(ports.size).toBe(MAX_ENDPOINTS_PER_OWNER);
      for (const port of ports) expect(await listening(port)).toBe(true);
    } finally {
      expect((await call('DELETE', `/v1/leases/${lease}`)).status).toBe(200);
    }
  }, 90_000);

  it(`${LEASES} leases of one tenant, ${MAX_ENDPOINTS_PER_OWNER} keys each at once: ${QUOTA} endpoints, the rest 429 naming the quota`, async () => {
    const leases: string[] = [];
    for (let i = 0; i < LEASES; i++) leases.push(await acquire());
    try {
      const answers = await Promise.all(
        leases.flatMap((lease) =>
          keys
            .slice(0, MAX_ENDPOINTS_PER_OWNER)
            .map((publicKey) => call('POST', `/v1/leases/${lease}/adb`, { publicKey })),
        ),
      );
      const opened = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status !== 200);
      expect(opened).toHaveLength(QUOTA);
      expect(refused).toHaveLength(LEASES * MAX_ENDPOINTS_PER_OWNER - QUOTA);
      for (const r of refused) {
        expect(r.status).toBe(429);
        expect(r.body['error']).toMatchObject({
          code: 'RATE_LIMITED',
          details: { quota: 'adbEndpoints', limit: QUOTA },
        });
      }
      const ports = new Set(opened.map((a) => a.body['port'] as number));
      expect(ports.size).toBe(QUOTA);
      for (const port of ports) expect(await listening(port)).toBe(true);
    } finally {
      for (const lease of leases) expect((await call('DELETE', `/v1/leases/${lease}`)).status).toBe(200);
    }
  }, 90_000);
});
