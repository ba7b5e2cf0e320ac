/**
 * An operation belongs to its lease (issue 15, defect 3): releasing a lease while a snapshot is
 * still starting its helper session must not leak the session's forward or leave the helper
 * running, and the snapshot must not answer 200 once the lease is gone. Real adb server, simulator
 * over TCP, HTTP app.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeviceBridge, testDeviceBridge } from '../support/bridge.ts';

const run = promisify(execFile);
type Json = Record<string, any>;

/** `adb forward --list` on the bridge's own adb server (the adb CLI, not our client). */
async function adbForwards(bridge: DeviceBridge): Promise<string[]> {
  const { stdout } = await run('adb', ['-P', String(bridge.config.adbPort), 'forward', '--list'], {
    timeout: 10_000,
  });
  return stdout.split('\n').filter((line) => line.trim() !== '');
}

describe('release racing a cold snapshot', () => {
  let bridge: DeviceBridge;
  beforeAll(async () => {
    bridge = await testDeviceBridge({ simulate: 1 });
  });
  afterAll(async () => bridge?.cleanup());

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await bridge.app.request(path, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json, at: performance.now() };
  };

  it('leaves 0 forwards and 0 running helpers, and never answers 200 after the lease is gone', async () => {
    const device = bridge.node.simulator!.devices[0]!;
    // Install the helper once, so each round's snapshot is "cold" only in its session.
    const first = (await api('POST', '/v1/leases', {})).body;
    expect(
      (await api('POST', `/v1/leases/${first.id}/helpers/android-snapshot-helper/ensure`, {})).status,
    ).toBe(200);
    expect((await api('DELETE', `/v1/leases/${first.id}`)).status).toBe(200);

    const outcomes: string[] = [];
    for (let round = 0; round < 12; round++) {
      const lease = await api('POST', '/v1/leases', {});
      expect(lease.status, JSON.stringify(lease.body)).toBe(201);
      const id = lease.body.id as string;
      const snapshot = api('POST', `/v1/leases/${id}/snapshot`, { transport: 'auto', format: 'xml' });
      // Release 0 ms after the snapshot started (and a little later in some rounds, mid-start).
      await new Promise((r) => setTimeout(r, round % 3 === 0 ? 0 : round * 8));
      const released = await api('DELETE', `/v1/leases/${id}`);
      const snap = await snapshot;
      outcomes.push(`${snap.status}${snap.status === 200 ? '' : `:${snap.body.error?.code}`}`);
      expect(released.status).toBe(200);
      expect(released.body.teardown.failures, `round ${round}`).toEqual([]);
      if (snap.status === 200) {
        // An answer is only allowed for a snapshot that finished while the lease was still active.
        expect(snap.at, `round ${round}: 200 after the lease was released`).toBeLessThanOrEqual(released.at);
      } else {
        expect(snap.body.error, `round ${round}: ${JSON.stringify(snap.body.error)}`).toMatchObject({
          code: 'LEASE_EXPIRED',
        });
      }
      expect(await adbForwards(bridge), `round ${round}: forwards left`).toEqual([]);
      expect(device.runningHelpers(), `round ${round}: helpers left running`).toBe(0);
      expect(device.listeners(), `round ${round}: listeners left on the device`).toEqual([]);
    }
    // The race was real: at least one round caught the snapshot in flight.
    expect(
      outcomes.some((o) => o !== '200'),
      outcomes.join(' '),
    ).toBe(true);
    const devices = (await api('GET', '/v1/devices')).body.devices as Json[];
    expect(devices[0]).toMatchObject({ state: 'online' });
  });
});
