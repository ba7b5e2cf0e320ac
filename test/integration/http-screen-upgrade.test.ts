/**
 * `GET /v1/leases/{id}/screen` asked of a server that only serves the app's fetch (no WebSocket
 * hook): a request asking for the upgrade is told the server's setup is at fault (503), one that
 * does not ask is told how to ask (400). Real adb server, simulator, the HTTP app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeviceBridge, testDeviceBridge, timedRequest } from '../support/bridge.ts';

describe('the live screen route without a WebSocket hook', () => {
  let bridge: DeviceBridge;
  let leaseId: string;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ simulate: 1 });
    leaseId = (await timedRequest(bridge.app, 'POST', '/v1/leases', { ttlSeconds: 60 })).body.id;
  }, 60_000);
  afterAll(async () => {
    await bridge?.cleanup();
  });

  const get = (headers: Record<string, string>) =>
    bridge.app.request(`/v1/leases/${leaseId}/screen`, { headers });

  it('an upgrade request: 503 naming the server setup, not the request', async () => {
    const res = await get({ Upgrade: 'websocket', Connection: 'Upgrade' });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status).toBe(503);
    expect(body.error.code).toBe('UNAVAILABLE');
    expect(body.error.message).toMatch(/does not take WebSocket upgrades/);
  });

  it('a plain GET: 400 saying how to ask', async () => {
    const res = await get({});
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status).toBe(400);
    expect(body.error.message).toMatch(/ask for it with Upgrade: websocket \(got "no Upgrade header"\)/);
  });
});
