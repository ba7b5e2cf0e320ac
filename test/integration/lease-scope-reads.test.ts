/**
 * A lease-scoped call reads its lease once (issue #11): one snapshot through the HTTP app reads the
 * lease from the store once, checks tenancy and fencing against that read, resolves the device's
 * owner with one device read, and checks the fence once more only to refuse a result whose lease
 * ended while it ran. Counted with wrappers around the real stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryDeviceStore } from '../../src/devices/memory-store.ts';
import type { DeviceStore } from '../../src/devices/types.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import type { LeaseStore } from '../../src/leases/types.ts';
import { CLIENT_TOKEN, type DeviceBridge, testDeviceBridge, testTokens } from '../support/bridge.ts';
import { type Counted, countingDeviceStore, countingLeaseStore } from '../support/counting-stores.ts';

// `list` is left out: the metrics gauges list leases on their own timer.
const LEASE_READS = ['get', 'leaseOfDevice', 'checkFence'];

describe('lease-scoped calls read the lease once', () => {
  let bridge: DeviceBridge;
  let leases: Counted<LeaseStore>;
  let devices: Counted<DeviceStore>;
  let leaseId: string;
  let token: number;
  const auth = { Authorization: `Bearer ${CLIENT_TOKEN}` };

  beforeAll(async () => {
    leases = countingLeaseStore(new MemoryLeaseStore());
    devices = countingDeviceStore(new MemoryDeviceStore());
    bridge = await testDeviceBridge({
      auth: testTokens(),
      simulate: 1,
      stores: { leaseStore: leases.store, deviceStore: devices.store },
    });
    const res = await bridge.app.request('/v1/leases', {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ selector: {}, ttlSeconds: 120 }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    ({ id: leaseId, fencingToken: token } = (await res.json()) as { id: string; fencingToken: number });
    // Warm the helper (installed once) so the counted call is a plain snapshot.
    const warm = await bridge.app.request(`/v1/leases/${leaseId}/snapshot`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ format: 'xml', transport: 'one-shot' }),
    });
    expect(warm.status, await warm.clone().text()).toBe(200);
  }, 120_000);

  afterAll(async () => bridge?.cleanup());

  it('one snapshot: one lease read, one completion fence check, one device read', async () => {
    // No background loop reads the stores while the call is counted.
    await bridge.node.leases.stop();
    await bridge.node.devices.stop();
    leases.reset();
    devices.reset();
    const res = await bridge.app.request(`/v1/leases/${leaseId}/snapshot`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', 'X-Fencing-Token': String(token) },
      body: JSON.stringify({ format: 'xml', transport: 'one-shot' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const reads = Object.fromEntries(LEASE_READS.map((m) => [m, leases.count(m)]));
    expect(reads).toEqual({ get: 1, leaseOfDevice: 0, checkFence: 1 });
    expect(devices.count('get')).toBe(1);
  });
});
