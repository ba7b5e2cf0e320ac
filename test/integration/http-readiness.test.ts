/**
 * `/readyz` is readiness (the node should get traffic): the artifact store, the lease store and the
 * bridge's adb server answer, and the node is not draining. `/healthz` stays liveness.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.ts';
import { type DeviceBridge, testDeviceBridge, timedRequest } from '../support/bridge.ts';

describe('/readyz reflects the device side and draining', () => {
  let bridge: DeviceBridge | undefined;
  afterEach(async () => {
    await bridge?.cleanup();
    bridge = undefined;
  });

  it('ready with every check ok; not ready, naming the check, once the adb server is gone; liveness unaffected', async () => {
    bridge = await testDeviceBridge({ simulate: 1 });
    const ok = await timedRequest(bridge.app, 'GET', '/readyz');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      status: 'ready',
      checks: { artifactStore: 'ok', adbServer: 'ok', leaseStore: 'ok' },
    });
    await bridge.node.adb.server.stop();
    const down = await timedRequest(bridge.app, 'GET', '/readyz');
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('not-ready');
    expect(down.body.checks.adbServer).not.toBe('ok');
    expect(down.body.checks.leaseStore).toBe('ok');
    expect((await timedRequest(bridge.app, 'GET', '/healthz')).status).toBe(200);
  }, 60_000);

  it('logs each change of readiness once, naming the failing checks (the request log has only the status)', async () => {
    const lines: Array<{ level: number; msg: string; checks?: Record<string, string> }> = [];
    const logger = createLogger('info', {
      write: (line: string) => {
        const entry = JSON.parse(line) as { level: number; msg: string; checks?: Record<string, string> };
        if (entry.msg.startsWith('readiness')) lines.push(entry);
      },
    });
    bridge = await testDeviceBridge({ simulate: 1, logger });
    await bridge.app.request('/readyz');
    await bridge.app.request('/readyz');
    expect(lines.map((l) => l.msg)).toEqual(['readiness: ready']);
    await bridge.node.adb.server.stop();
    await bridge.app.request('/readyz');
    await bridge.app.request('/readyz');
    expect(lines.map((l) => l.msg)).toEqual(['readiness: ready', 'readiness: not ready']);
    const notReady = lines[1];
    expect(notReady?.level).toBe(40);
    expect(notReady?.checks?.['adbServer']).toMatch(/ECONNREFUSED/);
    expect(notReady?.checks?.['leaseStore']).toBe('ok');
  }, 60_000);

  it('a check still running from an earlier probe is joined, not started again (a wedged store does not pile up requests)', async () => {
    bridge = await testDeviceBridge({ simulate: 1 });
    let calls = 0;
    let hung = true;
    let finish: (() => void) | undefined;
    bridge.services.readiness = {
      ...bridge.services.readiness,
      wedged: () => {
        calls++;
        if (!hung) return Promise.resolve();
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      },
    };
    for (let i = 0; i < 3; i++) {
      const r = await timedRequest(bridge.app, 'GET', '/readyz');
      expect(r.status).toBe(503);
      expect(r.body.checks.wedged).toMatch(/no answer within 1500 ms/);
      expect(r.body.checks.adbServer).toBe('ok');
    }
    expect(calls).toBe(1);
    // The dependency answers again: the pending check settles, the next probe starts a fresh one.
    hung = false;
    finish?.();
    // The pending check settles in the microtasks after `finish`: one event-loop turn later it is done.
    await new Promise((r) => setImmediate(r));
    const ready = await timedRequest(bridge.app, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(calls).toBe(2);
  }, 60_000);

  it('draining: not ready at once, every answer closes its connection, new leases get a typed 503', async () => {
    bridge = await testDeviceBridge({ simulate: 1 });
    const before = await bridge.app.request('/v1/devices');
    expect(before.headers.get('connection')).toBeNull();
    bridge.services.draining = true;
    bridge.node.drain();
    const ready = await bridge.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('connection')).toBe('close');
    expect(((await ready.json()) as { checks: Record<string, string> }).checks['node']).toBe('draining');
    const lease = await timedRequest(bridge.app, 'POST', '/v1/leases', { ttlSeconds: 60 });
    expect(lease.status).toBe(503);
    expect(lease.body.error).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    expect(lease.body.error.message).toMatch(/draining/);
    const health = await bridge.app.request('/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('connection')).toBe('close');
  }, 60_000);
});
