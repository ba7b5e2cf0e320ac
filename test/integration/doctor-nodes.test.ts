/**
 * The doctor through the owner proxy: two bridges on one Redis prefix, node A drives a simulated
 * device and listens on a real socket, node B drives nothing. A doctor asked of node B runs on node
 * A (the report names it) and answers through B; the run's bound stays under the forward timeout.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/api/index.ts';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  OTHER_TENANT_TOKEN,
  tempDir,
  testDeviceBridge,
  testTokens,
  timedRequest,
} from '../support/bridge.ts';
import { deleteKeys, REDIS_URL } from '../support/fleet.ts';
import { publishGlassFixtures } from '../support/glass.ts';

const prefix = `test:${randomUUID()}:`;
const env = { DEVICEBRIDGE_FORWARD_TIMEOUT_MS: '30000' };

describe('doctor through another node', () => {
  let a: DeviceBridge;
  let b: DeviceBridge;
  let server: ServerType;
  let tmp: { dir: string; cleanup(): Promise<void> };
  let leaseId: string;

  beforeAll(async () => {
    tmp = await tempDir();
    a = await testDeviceBridge({
      auth: testTokens(),
      simulate: 1,
      redisPrefix: prefix,
      env: { ...env, DEVICEBRIDGE_NODE: 'node-a' },
    });
    await publishGlassFixtures(a.services.store, tmp.dir);
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: a.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    await a.node.announce(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    b = await testDeviceBridge({
      auth: testTokens(),
      simulate: 0,
      redisPrefix: prefix,
      env: { ...env, DEVICEBRIDGE_NODE: 'node-b' },
    });
    const acquired = await timedRequest(
      b.app,
      'POST',
      '/v1/leases',
      { selector: {}, waitSeconds: 10 },
      {
        token: CLIENT_TOKEN,
      },
    );
    expect(acquired.status, JSON.stringify(acquired.body)).toBe(201);
    leaseId = acquired.body['id'];
  }, 120_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await b?.cleanup();
    await a?.cleanup();
    await tmp?.cleanup();
    const redis = new Redis(REDIS_URL);
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it('runs on the node that drives the device and answers through the one asked', async () => {
    const res = await b.app.request(`/v1/leases/${leaseId}/doctor`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ timeoutSeconds: 120 }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-devicebridge-forwarded-by')).toBe('node-a');
    const report = (await res.json()) as DoctorReport;
    expect(report).toMatchObject({ ok: true, bridge: { node: 'node-a' }, summary: { fail: 0, skip: 0 } });
    // Asked for 120 s, bounded under the 30 s forward timeout less 5 s.
    expect(report.timeoutSeconds).toBe(25);
  }, 60_000);

  it('another tenant is refused by the node asked, before anything is forwarded', async () => {
    const res = await b.app.request(`/v1/leases/${leaseId}/doctor`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${OTHER_TENANT_TOKEN}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-devicebridge-forwarded-by')).toBeNull();
  });
});
