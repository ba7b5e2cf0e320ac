/** LeaseScopes (src/lease-session/scope.ts): one lease read, tenancy, state, fencing, and where the call runs. */
import { describe, expect, it } from 'vitest';
import { MemoryDeviceStore } from '../../src/devices/memory-store.ts';
import { MemoryNodeDirectory } from '../../src/devices/nodes.ts';
import type { DeviceRecord } from '../../src/devices/types.ts';
import { BridgeError } from '../../src/errors.ts';
import { LeaseScopes } from '../../src/lease-session/scope.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';

async function expectCode(promise: Promise<unknown>, code: string): Promise<BridgeError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected ${code}, got a result`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BridgeError);
  expect((err as BridgeError).code).toBe(code);
  return err as BridgeError;
}

const acme = { name: 'ci', tenant: 'acme', role: 'client' as const };
const globex = { name: 'other', tenant: 'globex', role: 'client' as const };
const admin = { name: 'ops', tenant: 'ops', role: 'admin' as const };

function record(id: string, ownerNode: string): DeviceRecord {
  return {
    id,
    serial: `serial-${id}`,
    labels: {},
    state: 'online',
    properties: {},
    helpers: {},
    source: 'api',
    ownerNode,
    consecutiveFailures: 0,
    createdAt: 0,
    updatedAt: 0,
  };
}

async function setup() {
  const leases = new MemoryLeaseStore();
  const devices = new MemoryDeviceStore();
  const nodes = new MemoryNodeDirectory();
  await devices.put(record('here', 'node-a'));
  await devices.put(record('there', 'node-b'));
  await nodes.announce('node-b', 'http://127.0.0.1:7200');
  const base = { tenant: 'acme', holder: 'ci', ttlSeconds: 60, selector: {} };
  const here = (await leases.acquire({ ...base, candidates: ['here'] }))!;
  const there = (await leases.acquire({ ...base, candidates: ['there'] }))!;
  const gone = (await leases.acquire({ ...base, candidates: ['gone'] }))!;
  const scopes = new LeaseScopes({ leases, devices, node: 'node-a', nodes });
  return { leases, scopes, here, there, gone };
}

describe('LeaseScopes', () => {
  it('runs locally with the serial when this node drives the device', async () => {
    const { scopes, here } = await setup();
    const scope = await scopes.open(acme, here.id, { fencingToken: String(here.fencingToken) });
    expect(scope.owner).toEqual({ kind: 'local', serial: 'serial-here' });
    expect(scopes.local(scope)).toEqual({
      id: here.id,
      deviceId: 'here',
      fencingToken: here.fencingToken,
      serial: 'serial-here',
    });
  });

  it('names the owner (and its URL only when it may forward) when another node drives the device', async () => {
    const { scopes, there } = await setup();
    const located = await scopes.open(acme, there.id, { locate: true });
    expect(located.owner).toEqual({ kind: 'remote', node: 'node-b', url: 'http://127.0.0.1:7200' });
    const notLocated = await scopes.open(acme, there.id, { locate: false });
    expect(notLocated.owner).toEqual({ kind: 'remote', node: 'node-b', url: null });
    const err = await expectCode(
      Promise.resolve().then(() => scopes.local(notLocated)),
      'UNAVAILABLE',
    );
    expect(err.message).toContain('node-b');
  });

  it('a device without a record is NOT_FOUND when the call would run', async () => {
    const { scopes, gone } = await setup();
    const scope = await scopes.open(acme, gone.id);
    expect(scope.owner).toEqual({ kind: 'unknown' });
    await expectCode(
      Promise.resolve().then(() => scopes.local(scope)),
      'NOT_FOUND',
    );
  });

  it('other tenants get NOT_FOUND, admins see every tenant; ended leases and stale tokens LEASE_EXPIRED', async () => {
    const { scopes, leases, here } = await setup();
    await expectCode(scopes.open(globex, here.id), 'NOT_FOUND');
    await expectCode(scopes.open(acme, 'lease_nope'), 'NOT_FOUND');
    expect((await scopes.open(admin, here.id)).lease.id).toBe(here.id);
    await expectCode(
      scopes.open(acme, here.id, { fencingToken: String(here.fencingToken + 1) }),
      'LEASE_EXPIRED',
    );
    await leases.release(here.id);
    await expectCode(scopes.open(acme, here.id), 'LEASE_EXPIRED');
    expect((await scopes.lease(acme, here.id, { active: false })).state).toBe('released');
  });
});
