import { describe, expect, it } from 'vitest';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import { FakeClock, leaseStoreContract, teardownOf } from '../support/leases-contract.ts';

leaseStoreContract('memory', async (options) => new MemoryLeaseStore(options), { modelRuns: 150 });

describe('MemoryLeaseStore specifics', () => {
  it('forgets ended leases and teardown records after the retention, but never resets the fence', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore({ now: clock.now, retentionMs: 1_000 });
    const req = { candidates: ['d1'], tenant: 't', holder: 'h', ttlSeconds: 5, selector: {} };
    const first = await store.acquire(req);
    if (!first) throw new Error('expected a lease');
    await store.release(first.id);
    await store.recordTeardown(teardownOf(first, clock));
    clock.advance(999);
    await store.claimExpired(clock.t);
    expect(await store.get(first.id)).not.toBeNull();
    expect(await store.getTeardown(first.id)).not.toBeNull();
    clock.advance(1);
    await store.claimExpired(clock.t);
    expect(await store.get(first.id)).toBeNull();
    expect(await store.getTeardown(first.id)).toBeNull();
    expect((await store.acquire(req))?.fencingToken).toBe(first.fencingToken + 1);
  });

  it('returns copies: mutating a returned lease does not change the store', async () => {
    const store = new MemoryLeaseStore();
    const lease = await store.acquire({
      candidates: ['d1'],
      tenant: 't',
      holder: 'h',
      ttlSeconds: 5,
      selector: { labels: { a: 'b' } },
    });
    if (!lease) throw new Error('expected a lease');
    lease.state = 'expired';
    (lease.selector.labels as Record<string, string>).a = 'x';
    expect(await store.get(lease.id)).toMatchObject({ state: 'active', selector: { labels: { a: 'b' } } });
  });
});
