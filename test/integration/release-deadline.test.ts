/**
 * Release answers within its bound (`DEVICEBRIDGE_RELEASE_WAIT_MS`) even while the device stalls
 * (the link stays up, the device sends nothing): the answer says the teardown is still running and
 * where its record will be; the teardown goes on in the background, the device stays blocked until
 * it is recorded, and once the stall is lifted the record shows up in `GET /v1/teardowns`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeviceBridge, type TimedAnswer, testDeviceBridge, timedRequest } from '../support/bridge.ts';

const RELEASE_WAIT_MS = 1000;

let bridge: DeviceBridge;

const api = (method: string, path: string, body?: unknown): Promise<TimedAnswer> =>
  timedRequest(bridge.app, method, path, body);

/** Poll until `check` answers a value, or fail after `ms`. */
async function eventually<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const until = performance.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > until) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  bridge = await testDeviceBridge({
    simulate: 1,
    env: { DEVICEBRIDGE_RELEASE_WAIT_MS: String(RELEASE_WAIT_MS) },
  });
}, 120_000);

afterAll(async () => {
  bridge?.node.simulator?.devices[0]?.clearFault();
  await bridge?.cleanup();
});

describe('release while the device stalls', () => {
  it('a release that finishes within its bound answers the record as before', async () => {
    const acquired = await api('POST', '/v1/leases', { selector: {}, ttlSeconds: 300, waitSeconds: 30 });
    expect(acquired.status).toBe(201);
    const released = await api('DELETE', `/v1/leases/${acquired.body.id}`);
    expect(released.status).toBe(200);
    expect(released.body.teardown).toMatchObject({ leaseId: acquired.body.id, failures: [] });
    expect(released.body.teardownPending).toBeUndefined();
  });

  it('answers within its bound, says the teardown is pending; the record follows once the stall is lifted', async () => {
    const sim = bridge.node.simulator!.devices[0]!;
    const acquired = await api('POST', '/v1/leases', { selector: {}, ttlSeconds: 300, waitSeconds: 30 });
    expect(acquired.status, JSON.stringify(acquired.body)).toBe(201);
    const leaseId = acquired.body.id as string;
    const deviceId = acquired.body.deviceId as string;
    // A session lease: the helper's session runs, so the teardown has work on the device.
    const warm = await api('POST', `/v1/leases/${leaseId}/snapshot`, { format: 'xml', transport: 'session' });
    expect(warm.status, JSON.stringify(warm.body).slice(0, 400)).toBe(200);

    sim.setFault({ stall: true });
    // The stall lasts until the test lifts it below: an answer at all did not wait for the teardown.
    const released = await api('DELETE', `/v1/leases/${leaseId}`);
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    expect(released.body.lease).toMatchObject({ id: leaseId, state: 'released' });
    expect(released.body.teardown).toBeNull();
    expect(released.body.teardownPending).toMatchObject({
      waitedMs: RELEASE_WAIT_MS,
      records: '/v1/teardowns',
    });

    // Still tearing down: the device is not handed out meanwhile.
    const meanwhile = await api('POST', '/v1/leases', { selector: { deviceId }, waitSeconds: 0 });
    expect(meanwhile.status, JSON.stringify(meanwhile.body)).toBe(409);

    sim.clearFault();
    const record = await eventually('the teardown record', 60_000, async () => {
      const list = await api('GET', '/v1/teardowns?limit=20');
      return (
        list.body.teardowns as Array<{ lease: { id: string }; teardown: Record<string, unknown> }>
      ).find((t) => t.lease.id === leaseId)?.teardown;
    });
    expect(record).toMatchObject({ leaseId, deviceId, reason: 'released', failures: [] });
    expect(record.actions).toEqual(expect.arrayContaining([expect.stringMatching(/helper session/)]));

    // Recorded: the device is free again.
    const next = await eventually('the device free again', 30_000, async () => {
      const res = await api('POST', '/v1/leases', { selector: { deviceId }, waitSeconds: 0 });
      return res.status === 201 ? res : undefined;
    });
    await api('DELETE', `/v1/leases/${next.body.id}`);
  }, 120_000);
});
