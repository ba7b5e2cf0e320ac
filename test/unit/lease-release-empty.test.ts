/**
 * The one-step release (issue 16): `LeaseManager.release` with the lease's device known ends the
 * lease and records its empty teardown in one store call (`releaseEmpty`) only on the node that
 * drives the device, while `LeaseTeardown.holdEmpty` says nothing of the lease is here; the store
 * falls back to the pending path when a device-state journal exists. And `LeaseRoom.holdEmpty`:
 * what counts as "something of the lease here", and operations that start during the hold.
 * (The store side of both paths is in the LeaseStore contract, test/support/leases-contract.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseAdbPublicKey } from '../../src/adb/adb-public-key.ts';
import { ForwardLedger } from '../../src/adb/forward-ledger.ts';
import type { EndpointTarget, OpenEndpoint } from '../../src/adb/relay-endpoints.ts';
import { BridgeError } from '../../src/errors.ts';
import { LeaseRoom, type LeaseSessionOptions, type LeaseTarget } from '../../src/lease-session/index.ts';
import { LeaseManager, type LeaseTeardown } from '../../src/leases/manager.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import type { Lease, TeardownRecord } from '../../src/leases/types.ts';
import { fixturePublicKey } from '../support/adb-keys.ts';
import { expectCode } from '../support/leases-contract.ts';

const managers: LeaseManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

const acquire = { selector: {}, tenant: 't1', holder: 'alice' };

/** A manager on node-a over a memory store; `owner` drives d1; `held` says whether holdEmpty holds. */
function setup(options: { owner?: () => Promise<string | null>; held?: boolean } = {}) {
  const store = new MemoryLeaseStore();
  const closed: string[] = [];
  const holds: Array<{ leaseId: string; ended?: boolean }> = [];
  const teardown: LeaseTeardown = {
    closeLease: async (lease) => {
      closed.push(lease.id);
      // A hold is always settled before the usual teardown runs.
      expect(holds.every((h) => h.ended !== undefined)).toBe(true);
      return { actions: ['closed helper session'], failures: [] };
    },
    holdEmpty: (leaseId) => {
      if (options.held === false) return null;
      const hold: { leaseId: string; ended?: boolean } = { leaseId };
      holds.push(hold);
      return (ended) => {
        expect(hold.ended).toBeUndefined(); // settled once
        hold.ended = ended;
      };
    },
  };
  const manager = new LeaseManager({
    store,
    node: 'node-a',
    devices: {
      match: async () => ({ matching: ['d1'], available: ['d1'] }),
      ...(options.owner === undefined ? {} : { ownerOf: options.owner }),
    },
    teardown,
  });
  managers.push(manager);
  return { store, manager, closed, holds };
}

describe('LeaseManager.release in one step', () => {
  it('with the device known and nothing of the lease here: no closeLease, an empty record, the device free at once', async () => {
    const { store, manager, closed, holds } = setup({ owner: async () => 'node-a' });
    const lease = await manager.acquire(acquire);
    const { lease: ended, teardown } = await manager.release(lease.id, lease.fencingToken, lease);
    expect(ended).toMatchObject({ id: lease.id, state: 'released' });
    expect(teardown).toEqual<TeardownRecord>({
      leaseId: lease.id,
      deviceId: 'd1',
      reason: 'released',
      startedAt: teardown!.startedAt,
      finishedAt: teardown!.startedAt,
      actions: [],
      failures: [],
      node: 'node-a',
    });
    expect(closed).toEqual([]);
    expect(holds).toEqual([{ leaseId: lease.id, ended: true }]);
    expect(await store.getTeardown(lease.id)).toEqual(teardown);
    expect((await manager.acquire(acquire)).fencingToken).toBe(lease.fencingToken + 1);
  });

  it('a device-state journal of the lease: the lease ends pending and the usual teardown runs and records', async () => {
    const { store, manager, closed, holds } = setup();
    const lease = await manager.acquire(acquire);
    await store.saveDeviceState(lease.id, 'glass-a11y', { serial: 's1' });
    const { teardown } = await manager.release(lease.id, lease.fencingToken, lease);
    expect(closed).toEqual([lease.id]);
    expect(holds).toEqual([{ leaseId: lease.id, ended: true }]);
    expect(teardown!.actions).toEqual(['closed helper session']);
    expect(await store.getTeardown(lease.id)).toEqual(teardown);
  });

  it('something of the lease here (no hold), or the device not known: the usual teardown', async () => {
    const held = setup({ held: false });
    const a = await held.manager.acquire(acquire);
    expect((await held.manager.release(a.id, a.fencingToken, a)).teardown!.actions).toEqual([
      'closed helper session',
    ]);
    expect(held.closed).toEqual([a.id]);
    const unknown = setup();
    const b = await unknown.manager.acquire(acquire);
    await unknown.manager.release(b.id, b.fencingToken);
    expect(unknown.closed).toEqual([b.id]);
    expect(unknown.holds).toEqual([]);
  });

  it('another node drives the device, or the owner lookup fails: the hold is let go, the teardown is deferred as usual', async () => {
    for (const owner of [
      async () => 'node-b',
      async (): Promise<string | null> => Promise.reject(new Error('down')),
    ]) {
      const { store, manager, closed, holds } = setup({ owner });
      const lease = await manager.acquire(acquire);
      const { teardown } = await manager.release(lease.id, lease.fencingToken, lease);
      expect(teardown!.actions[0]).toMatch(/^deferred to/);
      // The owner is read inside the hold (nothing of the lease can start here meanwhile), then let go.
      expect(holds).toEqual([{ leaseId: lease.id, ended: false }]);
      expect(closed).toEqual([]);
      expect((await store.deferredTeardowns()).items.map((i) => i.lease.id)).toEqual([lease.id]);
    }
  });

  it('something of the lease here: the owner is not even read (no extra round trip on the usual path)', async () => {
    let reads = 0;
    const { manager, closed } = setup({
      held: false,
      owner: async () => {
        reads++;
        return 'node-a';
      },
    });
    const lease = await manager.acquire(acquire);
    await manager.release(lease.id, lease.fencingToken, lease);
    expect(closed).toEqual([lease.id]);
    // Only the usual teardown's own lookup.
    expect(reads).toBe(1);
  });

  it('an unclear store failure (the script may have run): waiting operations are refused when the lease did end, let run when it did not', async () => {
    for (const ranFirst of [true, false]) {
      const { store, manager, holds } = setup({ owner: async () => 'node-a' });
      const lease = await manager.acquire(acquire);
      const real = store.releaseEmpty.bind(store);
      store.releaseEmpty = async (...args: Parameters<typeof real>) => {
        if (ranFirst) await real(...args);
        throw new BridgeError('UNAVAILABLE', 'connection reset');
      };
      await expectCode(manager.release(lease.id, lease.fencingToken, lease), 'UNAVAILABLE');
      expect(holds).toEqual([{ leaseId: lease.id, ended: ranFirst }]);
    }
  });

  it('a wrong token is CONFLICT and lets operations run again; an ended or unknown lease answers as before', async () => {
    const { manager, holds, closed } = setup();
    const lease = await manager.acquire(acquire);
    await expectCode(manager.release(lease.id, lease.fencingToken + 1, lease), 'CONFLICT');
    expect(holds).toEqual([{ leaseId: lease.id, ended: false }]);
    await manager.release(lease.id, lease.fencingToken, lease);
    await expectCode(manager.release(lease.id, lease.fencingToken, lease), 'LEASE_EXPIRED');
    await expectCode(manager.release('lease_nope', 1, { deviceId: 'd1' }), 'NOT_FOUND');
    expect(holds.slice(1)).toEqual([
      { leaseId: lease.id, ended: true },
      { leaseId: lease.id, ended: true },
      { leaseId: 'lease_nope', ended: true },
    ]);
    expect(closed).toEqual([]);
  });

  it('a device named wrongly by the caller is not freed before a teardown ran for it', async () => {
    const { store, manager, closed } = setup();
    const lease = await manager.acquire(acquire);
    const { teardown } = await manager.release(lease.id, lease.fencingToken, { deviceId: 'd9' } as Lease);
    // The store saw another device than the lease's: the usual teardown ran, for the lease's device.
    expect(closed).toEqual([lease.id]);
    expect(teardown!.deviceId).toBe('d1');
    expect(await store.getTeardown(lease.id)).toEqual(teardown);
  });
});

const key = parseAdbPublicKey(fixturePublicKey);
const target: LeaseTarget = { id: 'lease-1', deviceId: 'dev-1', fencingToken: 3, serial: 'emulator-5554' };

function operations() {
  const open = new Map<string, OpenEndpoint[]>();
  const endpoints = {
    list: (owner: string) => open.get(owner) ?? [],
    async open(t: EndpointTarget): Promise<OpenEndpoint> {
      const view = {
        endpoint: '127.0.0.1:7201',
        host: '127.0.0.1',
        port: 7201,
        keyFingerprint: key.fingerprint,
        serial: '127.0.0.1:7201',
      };
      open.set(t.owner, [view]);
      return view;
    },
    async close(owner: string): Promise<string[]> {
      open.delete(owner);
      return [];
    },
  };
  const ledger = new ForwardLedger(
    {
      forward: async (_serial, local) => (local === 'tcp:0' ? 'tcp:41000' : local),
      removeForward: async () => undefined,
      listForwards: async () => [],
    },
    { ownsServer: true },
  );
  const options = {
    adb: { ledger },
    fence: { checkFence: async () => undefined },
    endpoints,
  } as unknown as LeaseSessionOptions;
  return { ops: new LeaseRoom(options), ledger, open };
}

describe('LeaseRoom.holdEmpty', () => {
  it('holds only while nothing of the lease is here: an adb endpoint or a forward of it means no hold', async () => {
    const { ops, ledger } = operations();
    const settle = ops.holdEmpty('lease-1');
    expect(settle).toBeTypeOf('function');
    expect(ops.holdEmpty('lease-1')).toBeNull(); // already held
    settle?.(false);
    await ops.adb.open(target, key);
    expect(ops.holdEmpty('lease-1')).toBeNull();
    await ops.closeLease('lease-1');
    expect(ops.holdEmpty('lease-2')).not.toBeNull();
    await ledger.open('lease-3', 'emulator-5554', 'tcp:0', 'localabstract:x');
    expect(ops.holdEmpty('lease-3')).toBeNull();
    await ledger.release('lease-3');
    expect(ops.holdEmpty('lease-3')).not.toBeNull();
  });

  it('an operation started during the hold waits: refused (LEASE_EXPIRED) when the lease ended, run when not', async () => {
    const { ops, open } = operations();
    const settle = ops.holdEmpty('lease-1') as (ended: boolean) => void;
    const refused = ops.adb.open(target, key);
    // The same call for a lease not held, started later, opens: this one would have by now.
    await ops.adb.open({ ...target, id: 'lease-2' }, key);
    expect([...open.keys()]).toEqual(['lease-2']); // lease-1's call waits, nothing opened for it
    settle(true);
    await expect(refused).rejects.toMatchObject({ code: 'LEASE_EXPIRED' });
    expect(open.has('lease-1')).toBe(false);
    const again = ops.holdEmpty('lease-1') as (ended: boolean) => void;
    const runs = ops.adb.open(target, key);
    again(false);
    expect((await runs).endpoint).toBe('127.0.0.1:7201');
    expect(open.has('lease-1')).toBe(true);
  });
});
