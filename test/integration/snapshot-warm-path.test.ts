/**
 * The warm snapshot path (issue 16) through a real listening server, simulated devices and the real adb
 * server: while the lease's helper session is alive, a session snapshot does not ensure the helper again
 * (no `cmd package` round trip, no write lock); one-shot snapshots and the first snapshot after the
 * session closed still do. Answers keep `Cache-Control: private, no-store` and `Vary: Authorization`
 * (set on the built answer without rebuilding it), errors included.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { SnapshotDriver } from '../../src/helpers/snapshot/driver.ts';
import { HelperSession } from '../../src/helpers/snapshot/session-client.ts';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  SHELL_TOKEN,
  testDeviceBridge,
  testTokens,
} from '../support/bridge.ts';

describe('warm snapshot path (real HTTP server)', () => {
  let bridge: DeviceBridge;
  let server: Awaited<ReturnType<typeof listenApp>>;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ auth: testTokens({ withShell: true }), simulate: 1 });
    server = await listenApp(bridge.app);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await server?.close();
    await bridge?.cleanup();
  });

  const post = async (path: string, body: unknown, token = CLIENT_TOKEN) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever fields the answer has
    return { res, json: (await res.json()) as Record<string, any> };
  };

  const release = async (id: string) => {
    const res = await fetch(`${server.url}/v1/leases/${id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${CLIENT_TOKEN}` },
    });
    expect(res.status).toBe(200);
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
    await release(lease.id);
  }, 60_000);

  it('auto, warm: a session failure after the helper was uninstalled ensures (reinstalls) before the one-shot fallback', async () => {
    vi.restoreAllMocks();
    const ensure = vi.spyOn(SnapshotDriver.prototype, 'ensure');
    const { json: lease } = await post('/v1/leases', {});
    const snapshot = () =>
      post(`/v1/leases/${lease.id}/snapshot`, { transport: 'auto', waitForIdleTimeoutMs: 0 });
    const first = await snapshot();
    expect(first.res.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.transport).toBe('session');
    expect(ensure).toHaveBeenCalledTimes(1);
    const packageName = (ensure.mock.contexts[0] as SnapshotDriver).manifest.packageName;

    // The helper goes away behind the bridge's back (a real shell command on the simulated device)…
    const removed = await post(
      `/v1/leases/${lease.id}/shell`,
      { argv: ['pm', 'uninstall', packageName] },
      SHELL_TOKEN,
    );
    expect(removed.res.status, JSON.stringify(removed.json)).toBe(200);
    expect(removed.json.stdout).toMatch(/Success/);
    // …and its session dies on the next request (the simulated process outlives the uninstall; a
    // device kills it): the session still looked alive, so the request skipped the ensure.
    vi.spyOn(HelperSession.prototype, 'request').mockRejectedValueOnce(
      new BridgeError('HELPER_FAILED', 'helper session connection failed: ECONNRESET'),
    );
    const after = await snapshot();
    expect(after.res.status, JSON.stringify(after.json)).toBe(200);
    expect(after.json.transport).toBe('one-shot');
    expect(ensure, 'the fallback ensured the helper first').toHaveBeenCalledTimes(2);
    const listed = await post(
      `/v1/leases/${lease.id}/shell`,
      {
        argv: ['pm', 'list', 'packages', packageName],
      },
      SHELL_TOKEN,
    );
    expect(listed.json.stdout).toContain(`package:${packageName}`);
    await release(lease.id);
  }, 60_000);
});
