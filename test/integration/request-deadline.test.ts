/**
 * One overall deadline per request (issue 15, defect 5): the `auto` transport's fallback to
 * one-shot happens inside the request's deadline, and every answer says what was tried. Real adb
 * server, simulator over TCP, HTTP app.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DeviceBridge, testDeviceBridge, timedRequest } from '../support/bridge.ts';

type Json = Record<string, any>;

describe('one deadline per request', () => {
  let bridge: DeviceBridge;
  let leaseId: string;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ simulate: 1 });
    leaseId = (await api('POST', '/v1/leases', { ttlSeconds: 600 })).body.id;
    expect(
      (await api('POST', `/v1/leases/${leaseId}/helpers/android-snapshot-helper/ensure`, {})).status,
    ).toBe(200);
  });
  afterEach(() => bridge.node.simulator!.devices[0]!.clearFault());
  afterAll(async () => {
    if (leaseId) await api('DELETE', `/v1/leases/${leaseId}`);
    await bridge?.cleanup();
  });

  const api = (method: string, path: string, body?: unknown) => timedRequest(bridge.app, method, path, body);

  it('a snapshot says what served it', async () => {
    const res = await api('POST', `/v1/leases/${leaseId}/snapshot`, { transport: 'auto', format: 'xml' });
    expect(res.status).toBe(200);
    expect(res.body.deadlineMs).toBe(8000 + 10_000);
    expect(res.body.attempts).toEqual([{ transport: 'session', outcome: 'ok', ms: expect.any(Number) }]);
    const viewport = await api('GET', `/v1/leases/${leaseId}/viewport?transport=one-shot`);
    expect(viewport.body.attempts).toEqual([
      { transport: 'one-shot', outcome: 'ok', ms: expect.any(Number) },
    ]);
    const tap = await api('POST', `/v1/leases/${leaseId}/gestures`, { kind: 'tap', x: 5, y: 5 });
    expect(tap.body.attempts).toEqual([{ transport: 'session', outcome: 'ok', ms: expect.any(Number) }]);
  });

  it('auto with a helper that never answers: TIMEOUT within timeoutMs + 10 s, fallback included', async () => {
    // Other capture options than the running session's: a fresh session must start.
    bridge.node.simulator!.devices[0]!.setFault({ helperTimeout: true });
    const res = await api('POST', `/v1/leases/${leaseId}/snapshot`, { transport: 'auto', timeoutMs: 1000 });
    expect(res.status, JSON.stringify(res.body)).toBe(504);
    expect(res.body.error).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect(res.body.error.details.deadlineMs).toBe(11_000);
    // Before the fix: the session's ready wait (11 s) and then a whole one-shot (11 s) more: 22 s.
    // The bound sits halfway, so a loaded machine's late timers cannot cross it.
    expect(res.ms).toBeLessThan(11_000 + 5500);
    const attempts = res.body.error.details.attempts as Json[];
    expect(attempts[0]).toMatchObject({ transport: 'session' });
    for (const a of attempts) expect(a.outcome).not.toBe('ok');
    expect(attempts.reduce((sum, a) => sum + a.ms, 0)).toBeLessThan(11_000 + 5500);
  }, 40_000);

  it('an explicit deadlineMs bounds the request, one-shot included', async () => {
    bridge.node.simulator!.devices[0]!.setFault({ helperTimeout: true });
    const res = await api('POST', `/v1/leases/${leaseId}/snapshot`, {
      transport: 'one-shot',
      timeoutMs: 8000,
      // Long enough that the one-shot run starts on a loaded machine (its turn on the device and the
      // helper's start come first: 1.5 s was used up before it on a busy run), well below timeoutMs.
      deadlineMs: 4000,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(504);
    expect(res.body.error.details).toMatchObject({ deadlineMs: 4000 });
    expect(res.ms).toBeLessThan(4000 + 2000);
    expect(res.body.error.details.attempts).toEqual([
      { transport: 'one-shot', outcome: 'TIMEOUT', ms: expect.any(Number) },
    ]);
  }, 40_000);
});
