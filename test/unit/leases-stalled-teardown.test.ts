/**
 * LeaseManager: a teardown that did not finish is run again, never skipped. Its device stays blocked
 * however long that takes; once its stamp in the store's teardowns due is stale, a node's pass runs
 * it (on the node that drives the device), exactly once at a time; a running teardown keeps its stamp
 * fresh. Managers on one memory store stand for the nodes of a fleet on Redis (the store side is the
 * LeaseStore contract, run against both stores).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LeaseManager, type LeaseManagerOptions } from '../../src/leases/manager.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import type { DeferredTeardown, Lease, LeaseStore, TeardownRecord } from '../../src/leases/types.ts';
import { expectCode, FakeClock } from '../support/leases-contract.ts';

const managers: LeaseManager[] = [];
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

const who = { selector: {}, tenant: 't', holder: 'h' };
const free = { tenant: 't', holder: 'h', ttlSeconds: 60, selector: {}, candidates: ['d1'] };

/** Poll until `predicate` holds. */
async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!(await predicate())) {
    if (performance.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Count the stalled-teardown passes answered by `store` (each pass asks it once). */
function countPasses(store: MemoryLeaseStore): () => number {
  let passes = 0;
  const claim = store.claimStalledTeardowns.bind(store);
  store.claimStalledTeardowns = async (...args: Parameters<typeof claim>) => {
    const due = await claim(...args);
    passes++;
    return due;
  };
  return () => passes;
}

/** A promise that settles only when `open` is called (a teardown that hangs until then). */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/**
 * The store as a bridge process sees it: once `crash()` is called the process is gone — every call
 * it makes fails (nothing it would do later reaches the store).
 */
function crashable(store: LeaseStore): { store: LeaseStore; crash: () => void } {
  let crashed = false;
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        crashed
          ? Promise.reject(new Error('process gone'))
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
  return { store: proxy, crash: () => (crashed = true) };
}

interface Node {
  manager: LeaseManager;
  ran: Array<{ lease: string; reason: string }>;
}

/** One node (manager) on `store`; `owner.of` says which node drives d1 (null: no device record). */
function node(
  name: string,
  store: LeaseStore,
  owner: { of: string | null },
  options: Partial<LeaseManagerOptions> & {
    closeLease?: (lease: Lease) => Promise<{ actions: string[]; failures: string[] }>;
    keep?: boolean;
  } = {},
): Node {
  const { closeLease, keep = true, ...rest } = options;
  const ran: Node['ran'] = [];
  const manager = new LeaseManager({
    store,
    node: name,
    devices: {
      match: async () => ({ matching: ['d1'], available: ['d1'] }),
      ownerOf: async () => owner.of,
    },
    teardown: {
      closeLease: async (lease, reason) => {
        ran.push({ lease: lease.id, reason });
        return closeLease ? closeLease(lease) : { actions: ['reset device'], failures: [] };
      },
    },
    ...rest,
  });
  if (keep) managers.push(manager);
  return { manager, ran };
}

describe('a teardown that never finished is run again, never skipped', () => {
  it('hung on a node that then crashed: the device stays blocked past the old 120 s grace; another node runs it after the stale period', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore({ now: clock.now });
    const owner = { of: 'node-a' as string | null };
    const hang = gate();
    const a = crashable(store);
    // node-a is never stopped (a crashed process is not): its hung teardown is released at the end.
    const nodeA = node('node-a', a.store, owner, {
      now: clock.now,
      stalledTeardownMs: 300_000,
      keep: false,
      closeLease: async () => {
        await hang.wait;
        return { actions: [], failures: [] };
      },
    });
    cleanups.push(hang.open);
    const nodeB = node('node-b', store, owner, { now: clock.now, stalledTeardownMs: 300_000 });
    const lease = await nodeA.manager.acquire(who);
    void nodeA.manager.release(lease.id, lease.fencingToken).catch(() => undefined);
    await waitFor(() => nodeA.ran.length === 1);
    a.crash();
    owner.of = 'node-b'; // node-b took the device over

    for (const ms of [121_000, 100_000, 78_999]) {
      clock.advance(ms);
      expect(await store.acquire(free)).toBeNull();
      await expectCode(nodeB.manager.acquire(who), 'CONFLICT');
      expect(await nodeB.manager.resumeStalledOnce()).toBe(0); // not stale yet
    }
    clock.advance(1); // 300 s after node-a stamped it
    expect(await nodeB.manager.resumeStalledOnce()).toBe(1);
    await waitFor(async () => (await store.getTeardown(lease.id)) !== null);
    expect(nodeB.ran).toEqual([{ lease: lease.id, reason: 'released' }]);
    expect(await store.getTeardown(lease.id)).toMatchObject({
      node: 'node-b',
      reason: 'released',
      actions: ['teardown resumed: the earlier run on node node-a did not finish', 'reset device'],
      failures: [],
    });
    expect((await nodeB.manager.acquire(who)).fencingToken).toBe(lease.fencingToken + 1);
    clock.advance(600_000);
    expect(await nodeB.manager.resumeStalledOnce()).toBe(0); // recorded: no longer due
  });

  it('a teardown whose record was lost (the store failed) is run again after the stale period', async () => {
    const clock = new FakeClock();
    let recordFails = 1;
    class FlakyRecord extends MemoryLeaseStore {
      override async recordTeardown(record: TeardownRecord): Promise<void> {
        if (recordFails-- > 0) throw new Error('store blip');
        return super.recordTeardown(record);
      }
    }
    const store = new FlakyRecord({ now: clock.now });
    const a = node('node-a', store, { of: 'node-a' }, { now: clock.now, stalledTeardownMs: 60_000 });
    const lease = await a.manager.acquire(who);
    await a.manager.release(lease.id, lease.fencingToken);
    expect(await store.getTeardown(lease.id)).toBeNull();
    clock.advance(59_999);
    expect(await a.manager.resumeStalledOnce()).toBe(0);
    expect(await store.acquire(free)).toBeNull();
    clock.advance(1);
    expect(await a.manager.resumeStalledOnce()).toBe(1);
    await waitFor(async () => (await store.getTeardown(lease.id)) !== null);
    expect(a.ran.map((r) => r.lease)).toEqual([lease.id, lease.id]);
    expect((await store.getTeardown(lease.id))?.actions[0]).toBe(
      'teardown resumed: the earlier run on node node-a did not finish',
    );
    expect(await store.acquire(free)).not.toBeNull();
  });

  it('a lease ended in the store with no teardown run (the node crashed right after) is torn down by the expiry loop', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore({ now: clock.now });
    const a = node(
      'node-a',
      store,
      { of: 'node-a' },
      {
        now: clock.now,
        stalledTeardownMs: 1_000,
        expiryIntervalMs: 5,
      },
    );
    const released = (await store.acquire(free)) as Lease;
    await store.release(released.id); // no claimant: nothing ran it
    const expired = (await store.acquire({ ...free, ttlSeconds: 1, candidates: ['d2'] })) as Lease;
    clock.advance(1_000);
    expect((await store.claimExpired(clock.t, 10, 'node-gone#1')).map((l) => l.id)).toEqual([expired.id]);
    const passes = countPasses(store);
    a.manager.start();
    await waitFor(() => a.ran.length === 1);
    // Two more whole passes: the other one, not stale yet, stays where it is.
    const seen = passes();
    await waitFor(() => passes() >= seen + 2);
    expect(a.ran.map((r) => r.lease)).toEqual([released.id]); // stale: 1 s old; the other is not yet
    clock.advance(1_000);
    await waitFor(() => a.ran.length === 2);
    await waitFor(async () => (await store.getTeardown(expired.id)) !== null);
    expect(a.ran[1]).toEqual({ lease: expired.id, reason: 'expired' });
    expect((await store.getTeardown(released.id))?.actions).toEqual([
      'teardown resumed: no earlier run of it finished',
      'reset device',
    ]);
    expect((await store.getTeardown(expired.id))?.actions[0]).toBe(
      'teardown resumed: the earlier run on node node-gone did not finish',
    );
    expect(await store.acquire(free)).not.toBeNull();
    expect(await store.acquire({ ...free, candidates: ['d2'] })).not.toBeNull();
  });

  it('a node restarted with the same name takes at once what its crashed process was running; other nodes wait for the stale period', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore({ now: clock.now });
    const owner = { of: 'node-a' as string | null };
    const lease = (await store.acquire(free)) as Lease;
    await store.release(lease.id, undefined, 'node-a#crashed');
    const b = node('node-b', store, owner, { now: clock.now, expiryIntervalMs: 5 });
    const passes = countPasses(store);
    b.manager.start();
    await waitFor(() => passes() >= 2); // node-b's start-up pass and the next one left it
    const a = node('node-a', store, owner, { now: clock.now, expiryIntervalMs: 5 });
    expect(b.ran).toEqual([]);
    a.manager.start();
    await waitFor(async () => (await store.getTeardown(lease.id)) !== null);
    expect(a.ran).toEqual([{ lease: lease.id, reason: 'released' }]);
    expect(b.ran).toEqual([]);
    expect((await store.getTeardown(lease.id))?.actions[0]).toBe(
      'teardown resumed: the earlier run on node node-a did not finish',
    );
  });

  it('a slow teardown that keeps its stamp fresh is not claimed by another node', async () => {
    // Timers and clocks faked: the stamp's refresh (every 20 ms) and node-b's questions interleave
    // exactly as written, however loaded the machine is.
    vi.useFakeTimers();
    try {
      const store = new MemoryLeaseStore();
      const owner = { of: 'node-a' as string | null };
      const slow = gate();
      cleanups.push(slow.open);
      const a = node('node-a', store, owner, {
        stalledTeardownMs: 60,
        closeLease: async () => {
          await slow.wait; // a long device reset
          return { actions: ['reset device'], failures: [] };
        },
      });
      const b = node('node-b', store, owner, { stalledTeardownMs: 60 });
      const lease = await a.manager.acquire(who);
      const released = a.manager.release(lease.id, lease.fencingToken);
      for (let i = 0; i < 100 && a.ran.length === 0; i++) await vi.advanceTimersByTimeAsync(0);
      expect(a.ran).toHaveLength(1);
      // Six stale periods: node-b keeps asking; node-a's run refreshes its stamp every 20 ms.
      let claimed = 0;
      for (let t = 0; t < 360; t += 5) {
        claimed += await b.manager.resumeStalledOnce();
        await vi.advanceTimersByTimeAsync(5);
      }
      expect(claimed).toBe(0);
      expect(b.ran).toEqual([]);
      expect(await store.acquire(free)).toBeNull();
      slow.open();
      await vi.advanceTimersByTimeAsync(0);
      expect((await released).teardown).toMatchObject({ node: 'node-a', actions: ['reset device'] });
      expect(await store.acquire(free)).not.toBeNull();
      await vi.advanceTimersByTimeAsync(100); // past a stale period: nothing due is left
      expect(await b.manager.resumeStalledOnce()).toBe(0);
      expect(a.ran).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a stalled teardown whose deferred record waits for the device's owner is left to it, never deferred twice", async () => {
    const clock = new FakeClock();
    const deferrals: DeferredTeardown[] = [];
    class CountingDefer extends MemoryLeaseStore {
      override async deferTeardown(item: DeferredTeardown): Promise<void> {
        deferrals.push(item);
        return super.deferTeardown(item);
      }
    }
    const store = new CountingDefer({ now: clock.now });
    const owner = { of: 'node-a' as string | null };
    const a = node('node-a', store, owner, { now: clock.now, stalledTeardownMs: 60_000 });
    const b = node('node-b', store, owner, { now: clock.now, stalledTeardownMs: 60_000 });
    const lease = await b.manager.acquire(who);
    await b.manager.release(lease.id, lease.fencingToken); // node-a drives d1: deferred to it
    expect(deferrals).toHaveLength(1);
    clock.advance(60_000); // node-a has not run it yet
    expect(await b.manager.resumeStalledOnce()).toBe(0);
    expect(await a.manager.resumeStalledOnce()).toBe(0);
    expect(deferrals).toHaveLength(1);
    expect(b.ran).toEqual([]);
    expect(a.ran).toEqual([]);
    expect(await a.manager.runDeferredOnce()).toBe(1);
    await waitFor(async () => (await store.getTeardown(lease.id)) !== null);
    expect(a.ran).toEqual([{ lease: lease.id, reason: 'released' }]);
    expect((await store.getTeardown(lease.id))?.actions).toEqual(['reset device']);
    clock.advance(600_000);
    expect(await b.manager.resumeStalledOnce()).toBe(0);
    expect(await a.manager.resumeStalledOnce()).toBe(0);
  });

  it('a stalled teardown claimed on a node that does not drive the device is deferred to the owner, whose record says it resumed', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore({ now: clock.now });
    const owner = { of: 'node-a' as string | null };
    const a = node('node-a', store, owner, { now: clock.now, stalledTeardownMs: 60_000 });
    const b = node('node-b', store, owner, { now: clock.now, stalledTeardownMs: 60_000 });
    const lease = (await store.acquire(free)) as Lease;
    await store.release(lease.id, undefined, 'node-c#1');
    clock.advance(60_000);
    expect(await b.manager.resumeStalledOnce()).toBe(1);
    await waitFor(async () => (await store.deferredTeardowns()).items.length === 1);
    expect((await store.deferredTeardowns()).items[0]).toMatchObject({
      lease: { id: lease.id },
      from: 'node-b',
      owner: 'node-a',
      resumedFrom: 'node-c#1',
    });
    expect(b.ran).toEqual([]);
    expect(await a.manager.runDeferredOnce()).toBe(1);
    await waitFor(async () => (await store.getTeardown(lease.id)) !== null);
    expect(await store.getTeardown(lease.id)).toMatchObject({
      node: 'node-a',
      actions: ['teardown resumed: the earlier run on node node-c did not finish', 'reset device'],
    });
    // The owner stamped the deferred run as its own when it started: not stale, not claimed again.
    expect((await store.deferredTeardowns()).items).toEqual([]);
    expect(await store.acquire(free)).not.toBeNull();
  });
});
