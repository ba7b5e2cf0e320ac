/**
 * The warm snapshot path (issue 16) through a real listening server, simulated devices and the real adb
 * server: while the lease's helper session is alive, a session snapshot does not ensure the helper again
 * (no `cmd package` round trip, no write lock); one-shot snapshots and the first snapshot after the
 * session closed still do. Answers keep `Cache-Control: private, no-store` and `Vary: Authorization`
 * (set on the built answer without rebuilding it), errors included.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SnapshotDriver } from '../../src/helpers/snapshot/driver.ts';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';

describe('warm snapshot path (real HTTP server)', () => {
  let bridge: DeviceBridge;
  let server: Awaited<ReturnType<typeof listenApp>>;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens(), simulate: 1 });
    server = await listenApp(bridge.app);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await server?.close();
    await bridge?.cleanup();
  });

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever fields the answer has
    return { res, json: (await res.json()) as Record<string, any> };
  };

  it('skips the ensure while the session lives; one-shot and a new session ensure again', async () => {
    const ensure = vi.spyOn(SnapshotDriver.prototype, 'ensure');
    const { json: lease } = await post('/v1/leases', {});
    const snapshot = (transport: string) =>
      post(`/v1/leases/${lease.id}/snapshot`, { transport, waitForIdleTimeoutMs: 0 });

    for (let i = 0; i < 4; i++) {
      const { res, json } = await snapshot('session');
      expect(res.status, JSON.stringify(json)).toBe(200);
      expect(json.transport).toBe('session');
      expect(json.snapshot.nodeCount).toBeGreaterThan(0);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      expect(res.headers.get('vary')).toBe('Authorization');
    }
    expect(ensure, 'only the first session snapshot ensures').toHaveBeenCalledTimes(1);

    const oneShot = await snapshot('one-shot');
    expect(oneShot.res.status, JSON.stringify(oneShot.json)).toBe(200);
    expect(ensure, 'a one-shot snapshot always ensures').toHaveBeenCalledTimes(2);

    // The one-shot closed the session: the next session snapshot ensures before starting a new one.
    const again = await snapshot('auto');
    expect(again.res.status, JSON.stringify(again.json)).toBe(200);
    expect(again.json.transport).toBe('session');
    expect(ensure).toHaveBeenCalledTimes(3);
    await snapshot('session');
    expect(ensure).toHaveBeenCalledTimes(3);

    // An error answer (invalid body) carries the same headers.
    const bad = await post(`/v1/leases/${lease.id}/snapshot`, { maxNodes: -1 });
    expect(bad.res.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_ARGUMENT');
    expect(bad.res.headers.get('cache-control')).toBe('private, no-store');
    expect(bad.res.headers.get('vary')).toBe('Authorization');
  }, 60_000);
});
