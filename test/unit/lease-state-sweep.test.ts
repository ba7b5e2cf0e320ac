/**
 * The node's sweep of its per-lease state (sessions, companions, forwards): closed when the store no
 * longer knows the lease, when the lease ended and its teardown was recorded (it ran elsewhere), or
 * when another node drives the device now (finding 3). State of a live lease here is kept.
 */
import { describe, expect, it } from 'vitest';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import { sweepLeaseState } from '../../src/node/lease-state-sweep.ts';
import { FakeClock, teardownOf } from '../support/leases-contract.ts';

describe('sweepLeaseState', () => {
  it('closes lost, torn-down-elsewhere and moved leases; keeps live ones and ended ones awaiting teardown', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore({ now: clock.now });
    const base = { tenant: 't', holder: 'h', ttlSeconds: 60, selector: {} };
    const live = (await store.acquire({ ...base, candidates: ['d-live'] }))!;
    const moved = (await store.acquire({ ...base, candidates: ['d-moved'] }))!;
    const elsewhere = (await store.acquire({ ...base, candidates: ['d-done'] }))!;
    const pending = (await store.acquire({ ...base, candidates: ['d-pending'] }))!;
    await store.release(elsewhere.id);
    await store.recordTeardown({ ...teardownOf(elsewhere, clock), node: 'node-b' });
    await store.release(pending.id); // its teardown is still to run (here or deferred to here)
    const held = new Set([live.id, moved.id, elsewhere.id, pending.id, 'lease-lost']);
    const closed: string[] = [];
    const owners: Record<string, string | null> = {
      'd-live': 'node-a',
      'd-moved': 'node-b',
      'd-done': 'node-a',
      'd-pending': 'node-a',
    };
    const swept = await sweepLeaseState({
      node: 'node-a',
      store,
      local: {
        leaseIds: () => [...held],
        closeLease: async (id: string) => {
          closed.push(id);
          held.delete(id);
          return { actions: [`closed ${id}`], failures: [] };
        },
      },
      ownerOf: async (deviceId) => owners[deviceId] ?? null,
    });
    expect(closed.sort()).toEqual(['lease-lost', moved.id, elsewhere.id].sort());
    expect(swept).toBe(3);
    expect([...held].sort()).toEqual([live.id, pending.id].sort());
  });
});
