import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { LeaseSelector } from '../../src/devices/selector.ts';
import {
  type Candidates,
  type LeaseDevices,
  LeaseManager,
  type LeaseManagerOptions,
  type LeaseTeardown,
} from '../../src/leases/manager.ts';
import { MemoryLeaseStore } from '../../src/leases/memory-store.ts';
import type { DeferredTeardown, DeferredTeardowns, Lease, TeardownRecord } from '../../src/leases/types.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { expectCode, FakeClock } from '../support/leases-contract.ts';

const managers: LeaseManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

interface Harness {
  manager: LeaseManager;
  store: MemoryLeaseStore;
  teardowns: Array<{ lease: Lease; reason: string }>;
  quarantined: Array<{ deviceId: string; reason: string }>;
}

type Teardown = LeaseTeardown['closeLease'];

/**
 * A safety-net poll that never comes within a test: a waiter served (or ended) at all was woken by
 * the event under test; without it the test runs into its timeout.
 */
const POLL_NEVER_MS = 3_600_000;
type Quarantine = NonNullable<LeaseDevices['quarantine']>;

function harness(
  options: Partial<Omit<LeaseManagerOptions, 'devices' | 'teardown'>> & {
    devices?: string[];
    clock?: FakeClock;
    offline?: string[];
    teardown?: Teardown;
    quarantine?: Quarantine;
  } = {},
): Harness {
  const { devices: ids, teardown, quarantine, offline, clock, ...rest } = options;
  const devices = ids ?? ['d1', 'd2'];
  const store = new MemoryLeaseStore(clock ? { now: clock.now } : {});
  const teardowns: Harness['teardowns'] = [];
  const quarantined: Harness['quarantined'] = [];
  const manager = new LeaseManager({
    store,
    node: 'node-a',
    pollMs: 20,
    devices: {
      match: async (selector: LeaseSelector): Promise<Candidates> => {
        const matching = devices.filter(
          (d) => selector.labels?.pool !== 'none' && (!selector.deviceId || selector.deviceId === d),
        );
        return { matching, available: matching.filter((d) => !offline?.includes(d)) };
      },
      quarantine:
        quarantine ??
        (async (deviceId, reason) => {
          quarantined.push({ deviceId, reason });
        }),
    },
    teardown: {
      closeLease:
        teardown ??
        (async (lease, reason) => {
          teardowns.push({ lease, reason });
          return { actions: [`removed forwards of ${lease.id}`], failures: [] };
        }),
    },
    ...(clock ? { now: clock.now } : {}),
    ...rest,
  });
  managers.push(manager);
  return { manager, store, teardowns, quarantined };
}

const who = { tenant: 't1', holder: 'alice' };

describe('LeaseManager.drain', () => {
  it('refuses new leases and ends every wait at once with UNAVAILABLE (retryable); held leases stay valid', async () => {
    // Neither a poll nor the wait's end comes within the test: only the drain can end the wait.
    const { manager } = harness({ devices: ['d1'], pollMs: POLL_NEVER_MS });
    const held = await manager.acquire({ ...who, selector: {} });
    const waiter = manager.acquire({ ...who, holder: 'bob', selector: {}, waitSeconds: 300 });
    await waitFor(async () => (await manager.waitingCount()) === 1);
    manager.drain();
    const err = await expectCode(waiter, 'UNAVAILABLE');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/draining/);
    expect(await manager.waitingCount()).toBe(0);
    const refused = await expectCode(manager.acquire({ ...who, selector: {} }), 'UNAVAILABLE');
    expect(refused.details).toMatchObject({ node: 'node-a', draining: true });
    expect(manager.draining).toBe(true);
    expect(await manager.renew(held.id, held.fencingToken, 60)).toMatchObject({ state: 'active' });
    expect((await manager.release(held.id, held.fencingToken)).lease.state).toBe('released');
  });
});

describe('LeaseManager metrics', () => {
  it('counts acquisitions by outcome, observes wait time, counts expiries and teardown outcomes', async () => {
    const metrics = createMetrics();
    const clock = new FakeClock();
    let failTeardown = false;
    const { manager } = harness({
      devices: ['d1'],
      clock,
      metrics,
      teardown: async () => ({ actions: [], failures: failTeardown ? ['forward stuck'] : [] }),
    });
    const value = async (
      metric: { get(): Promise<{ values: Array<{ value: number; labels: object }> }> },
      labels = {},
    ) =>
      (await metric.get()).values.find((v) => JSON.stringify(v.labels) === JSON.stringify(labels))?.value ??
      0;
    const first = await manager.acquire({ ...who, selector: {}, ttlSeconds: 5 });
    await expectCode(manager.acquire({ ...who, selector: {} }), 'CONFLICT');
    await manager.release(first.id, first.fencingToken);
    await manager.acquire({ ...who, selector: {}, ttlSeconds: 5 });
    failTeardown = true;
    clock.advance(10_000);
    expect(await manager.expireOnce()).toBe(1);
    manager.drain();
    await expectCode(manager.acquire({ ...who, selector: {} }), 'UNAVAILABLE');
    expect(await value(metrics.leaseAcquisitions, { outcome: 'granted' })).toBe(2);
    expect(await value(metrics.leaseAcquisitions, { outcome: 'conflict' })).toBe(1);
    expect(await value(metrics.leaseAcquisitions, { outcome: 'refused' })).toBe(1);
    expect(await value(metrics.leaseExpiries)).toBe(1);
    expect(await value(metrics.leaseTeardowns, { outcome: 'ok' })).toBe(1);
    expect(await value(metrics.leaseTeardowns, { outcome: 'failed' })).toBe(1);
    const text = await metrics.registry.getSingleMetricAsString('devicebridge_lease_wait_seconds');
    expect(text).toMatch(/devicebridge_lease_wait_seconds_count 2/);
  });

  it('counts what started the attempt that granted a queued request: a wake-up, the poll, the look on joining', async () => {
    const grants = async (metrics: ReturnType<typeof createMetrics>) =>
      Object.fromEntries(
        (await metrics.leaseWaiterGrants.get()).values.map((v) => [v.labels.after, v.value]),
      );
    /** End `lease` in the store only, as another node would: no local wake-up. */
    const endElsewhere = async (store: MemoryLeaseStore, lease: Lease) => {
      const ended = (await store.release(lease.id)) as Lease;
      await store.recordTeardown({
        leaseId: ended.id,
        deviceId: ended.deviceId,
        reason: 'released',
        startedAt: 0,
        finishedAt: 0,
        actions: [],
        failures: [],
        node: 'node-b',
      });
    };

    // A local release wakes the waiter (no poll comes within the test).
    const woken = createMetrics();
    const one = harness({ devices: ['d1'], pollMs: POLL_NEVER_MS, metrics: woken });
    const held = await one.manager.acquire({ ...who, selector: {} });
    const waiting = one.manager.acquire({ ...who, holder: 'bob', selector: {}, waitSeconds: 300 });
    await waitFor(async () => (await one.manager.waitingCount()) === 1);
    await one.manager.release(held.id);
    await waiting;
    expect(await grants(woken)).toEqual({ 'wake-up': 1 });

    // Freed elsewhere after the waiter's first look (this manager is not subscribed): the poll.
    const polled = createMetrics();
    const two = harness({ devices: ['d1'], metrics: polled });
    let looks = 0;
    const acquire = two.store.acquire.bind(two.store);
    two.store.acquire = async (request) => {
      const lease = await acquire(request);
      looks++;
      return lease;
    };
    const taken = await two.manager.acquire({ ...who, selector: {} });
    const queued = two.manager.acquire({ ...who, holder: 'bob', selector: {}, waitSeconds: 300 });
    await waitFor(() => looks >= 3); // the first attempt, then the look on joining the queue
    await endElsewhere(two.store, taken);
    await queued;
    expect(await grants(polled)).toEqual({ poll: 1 });

    // Freed between the first attempt and joining the queue: the look on joining takes it.
    const joined = createMetrics();
    const three = harness({ devices: ['d1'], pollMs: POLL_NEVER_MS, metrics: joined });
    const kept = await three.manager.acquire({ ...who, selector: {} });
    const enqueue = three.store.enqueue.bind(three.store);
    three.store.enqueue = async (queueKey, waiterId, ttlSeconds) => {
      await endElsewhere(three.store, kept);
      return enqueue(queueKey, waiterId, ttlSeconds);
    };
    await three.manager.acquire({ ...who, holder: 'bob', selector: {}, waitSeconds: 300 });
    expect(await grants(joined)).toEqual({ joined: 1 });
  });
});

describe('LeaseManager.acquire', () => {
  it('NOT_FOUND with the selector echoed when nothing matches at all', async () => {
    const { manager } = harness();
    const err = await expectCode(
      manager.acquire({ ...who, selector: { labels: { pool: 'none' } } }),
      'NOT_FOUND',
    );
    expect(err.details).toEqual({ selector: { labels: { pool: 'none' } } });
  });

  it('validates ttlSeconds, waitSeconds and the selector, naming the field', async () => {
    const { manager } = harness({ maxTtlSeconds: 600 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ttlSeconds: 0 }, 'ttlSeconds'],
      [{ ttlSeconds: 601 }, 'ttlSeconds'],
      [{ ttlSeconds: 1.5 }, 'ttlSeconds'],
      [{ waitSeconds: -1 }, 'waitSeconds'],
      [{ waitSeconds: 301 }, 'waitSeconds'],
      [{ selector: { sdkMin: 0 } }, 'selector.sdkMin'],
    ];
    for (const [extra, field] of cases) {
      const err = await expectCode(manager.acquire({ ...who, selector: {}, ...extra }), 'INVALID_ARGUMENT');
      expect((err.details?.errors as Array<{ path: string }> | undefined)?.[0]?.path).toBe(field);
    }
  });

  it('leases with the default TTL; CONFLICT at once when nothing is free and waitSeconds is 0', async () => {
    const { manager } = harness({ offline: ['d2'] });
    const lease = await manager.acquire({ ...who, selector: {} });
    expect(lease).toMatchObject({ deviceId: 'd1', ttlSeconds: 300, tenant: 't1', holder: 'alice' });
    expect(lease.expiresAt - lease.acquiredAt).toBe(300_000);
    const err = await expectCode(manager.acquire({ ...who, selector: {} }), 'CONFLICT');
    expect(err.retryable).toBe(true);
    expect(err.message).toBe(
      'no device free within 0s: every matching device is leased; wait for one with waitSeconds (CLI: lease acquire --wait S)',
    );
    expect(await manager.activeCount()).toBe(1);
  });

  it('CONFLICT after waitSeconds when no device frees, and the waiter leaves the queue', async () => {
    // The wait's clock and its poll timers are faked: the test moves time, the store runs as is.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const { manager } = harness({ devices: ['d1'] });
    await manager.acquire({ ...who, selector: {} });
    let settled = false;
    const pending = manager.acquire({ ...who, selector: {}, waitSeconds: 1 }).finally(() => {
      settled = true;
    });
    pending.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false); // still waiting just before its second
    expect(await manager.waitingCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(21); // its last poll, past the second
    const err = await expectCode(pending, 'CONFLICT');
    expect(err.message).toBe('no device free within 1s');
    expect(err.retryable).toBe(true);
    expect(await manager.waitingCount()).toBe(0);
  });

  it('succeeds when another holder releases during the wait, waiters served first come first served', async () => {
    // No poll within the test: each waiter is served by the release before it, or never.
    const { manager } = harness({ devices: ['d1'], pollMs: POLL_NEVER_MS });
    const first = await manager.acquire({ ...who, selector: {} });
    const order: string[] = [];
    const waiters = ['bob', 'carol', 'dave'].map((holder) =>
      manager.acquire({ ...who, holder, selector: {}, waitSeconds: 300 }).then((lease) => {
        order.push(holder);
        return lease;
      }),
    );
    await waitFor(async () => (await manager.waitingCount()) === 3);
    // A new request without a place in the queue does not jump it, even once the device is free.
    await manager.release(first.id, first.fencingToken);
    await expectCode(manager.acquire({ ...who, holder: 'eve', selector: {} }), 'CONFLICT');
    const bob = await waiters[0]; // woken by the local release (no poll comes)
    expect(bob).toMatchObject({ holder: 'bob', deviceId: 'd1', fencingToken: first.fencingToken + 1 });
    await manager.release(bob?.id ?? '');
    const carol = await waiters[1];
    await manager.release(carol?.id ?? '');
    const dave = await waiters[2];
    expect(order).toEqual(['bob', 'carol', 'dave']);
    expect(dave?.fencingToken).toBe(first.fencingToken + 3);
  });

  it('a device freed elsewhere between the first attempt and joining the queue is taken at once, not at the next poll', async () => {
    // The store publishes a freed device only while someone is queued: the waiter must look again
    // right after it joined the queue.
    // No poll within the test, and no wake-up: only the look right after joining can take it.
    const { manager, store } = harness({ devices: ['d1'], pollMs: POLL_NEVER_MS });
    const held = await manager.acquire({ ...who, selector: {} });
    const enqueue = store.enqueue.bind(store);
    let freed = false;
    store.enqueue = async (queueKey, waiterId, ttlSeconds) => {
      if (!freed) {
        freed = true;
        // Another node ends the lease and records its teardown (no local wake-up here).
        const ended = (await store.release(held.id)) as Lease;
        await store.recordTeardown({
          leaseId: ended.id,
          deviceId: ended.deviceId,
          reason: 'released',
          startedAt: 0,
          finishedAt: 0,
          actions: [],
          failures: [],
          node: 'node-b',
        });
      }
      return enqueue(queueKey, waiterId, ttlSeconds);
    };
    const lease = await manager.acquire({ ...who, holder: 'bob', selector: {}, waitSeconds: 300 });
    expect(lease).toMatchObject({ holder: 'bob', deviceId: 'd1', fencingToken: held.fencingToken + 1 });
    expect(freed).toBe(true);
  });

  it("a client waiterId is its tenant's: another tenant sending it does not take the place", async () => {
    const { manager } = harness({ devices: ['d1'] });
    const held = await manager.acquire({ tenant: 't0', holder: 'owner', selector: {} });
    const id = 'waiter_AAAAAAAAAAAAAAAAAAAA';
    // Tenant A's wait runs out: its place stays; the 409 names the id it resumes with.
    const errA = await expectCode(
      manager.acquire({ tenant: 'ta', holder: 'alice', selector: {}, waitSeconds: 1, waiterId: id }),
      'CONFLICT',
    );
    expect(errA.details).toMatchObject({ waiterId: id });
    expect((await manager.listWaiters({ tenant: 'ta' })).map((w) => [w.waiterId, w.position])).toEqual([
      [id, 1],
    ]);
    await manager.release(held.id, held.fencingToken);
    // Tenant B sends A's id (seen in A's 409): it queues behind A instead of taking A's place.
    const errB = await expectCode(
      manager.acquire({ tenant: 'tb', holder: 'bob', selector: {}, waitSeconds: 1, waiterId: id }),
      'CONFLICT',
    );
    expect(errB.details).toMatchObject({ waiterId: id });
    const all = await manager.listWaiters();
    expect(all.map((w) => [w.tenant, w.waiterId, w.position])).toEqual([
      ['ta', id, 1],
      ['tb', id, 2],
    ]);
    expect((await manager.listWaiters({ tenant: 'tb' })).map((w) => w.position)).toEqual([2]);
    // A resumes and gets the device; B's place is still B's (behind nobody now).
    const leaseA = await manager.acquire({ tenant: 'ta', holder: 'alice', selector: {}, waiterId: id });
    expect(leaseA).toMatchObject({ deviceId: 'd1', tenant: 'ta' });
    expect((await manager.listWaiters()).map((w) => [w.tenant, w.position])).toEqual([['tb', 1]]);
  });

  it('a second live request with the same (tenant, waiterId) on this node gets CONFLICT naming the id', {
    timeout: 15_000,
  }, async () => {
    const { manager } = harness({ devices: ['d1'] });
    await manager.acquire({ tenant: 't0', holder: 'owner', selector: {} });
    const id = 'waiter_BBBBBBBBBBBBBBBBBBBB';
    const first = manager.acquire({
      tenant: 'ta',
      holder: 'alice',
      selector: {},
      waitSeconds: 30,
      waiterId: id,
    });
    first.catch(() => undefined);
    await waitFor(async () => (await manager.waitingCount()) === 1);
    // Refused at once: had it waited, its 300 s wait would run into the test's timeout.
    const err = await expectCode(
      manager.acquire({ tenant: 'ta', holder: 'alice', selector: {}, waitSeconds: 300, waiterId: id }),
      'CONFLICT',
    );
    expect(err.message).toContain(id);
    expect(err.details).toMatchObject({ waiterId: id });
    // Another tenant may use the same id: it is a different waiter.
    const other = manager.acquire({
      tenant: 'tb',
      holder: 'bob',
      selector: {},
      waitSeconds: 30,
      waiterId: id,
    });
    other.catch(() => undefined);
    await waitFor(async () => (await manager.waitingCount()) === 2);
    manager.drain();
    await expectCode(first, 'UNAVAILABLE');
    await expectCode(other, 'UNAVAILABLE');
  });

  it('an aborted waiter (client gone) leaves the queue and rejects with the abort reason', async () => {
    const { manager } = harness({ devices: ['d1'] });
    const held = await manager.acquire({ ...who, selector: {} });
    const controller = new AbortController();
    const pending = manager.acquire({ ...who, selector: {}, waitSeconds: 30, signal: controller.signal });
    await waitFor(async () => (await manager.waitingCount()) === 1);
    controller.abort(new Error('client disconnected'));
    await expect(pending).rejects.toThrow('client disconnected');
    expect(await manager.waitingCount()).toBe(0);
    // The next waiter is not stuck behind the aborted one.
    const next = manager.acquire({ ...who, selector: {}, waitSeconds: 5 });
    await manager.release(held.id);
    expect((await next).fencingToken).toBe(held.fencingToken + 1);
  });
});

describe('LeaseManager release, renew and expiry', () => {
  it('release runs teardown once and records it; the device frees afterwards; second release LEASE_EXPIRED', async () => {
    const { manager, store, teardowns } = harness({ devices: ['d1'] });
    const lease = await manager.acquire({ ...who, selector: {} });
    const { lease: ended, teardown } = await manager.release(lease.id, lease.fencingToken);
    expect(ended.state).toBe('released');
    expect(teardowns).toHaveLength(1);
    expect(teardowns[0]).toMatchObject({ reason: 'released', lease: { id: lease.id } });
    expect(teardown).toMatchObject({
      leaseId: lease.id,
      deviceId: 'd1',
      reason: 'released',
      node: 'node-a',
      actions: [`removed forwards of ${lease.id}`],
      failures: [],
    });
    expect(teardown!.finishedAt).toBeGreaterThanOrEqual(teardown!.startedAt);
    expect(await store.getTeardown(lease.id)).toEqual(teardown);
    await expectCode(manager.release(lease.id), 'LEASE_EXPIRED');
    await expectCode(manager.release('lease_nope'), 'NOT_FOUND');
    expect(teardowns).toHaveLength(1);
    await expectCode(manager.checkFence('d1', lease.id, lease.fencingToken), 'LEASE_EXPIRED');
    expect((await manager.acquire({ ...who, selector: {} })).fencingToken).toBe(lease.fencingToken + 1);
  });

  it('release answers within releaseWaitMs with the teardown pending; the teardown runs on, is recorded, then frees the device', async () => {
    let finish!: () => void;
    const { manager, store } = harness({
      devices: ['d1'],
      releaseWaitMs: 50,
      teardown: () =>
        new Promise((resolve) => {
          finish = () => resolve({ actions: ['closed helper session'], failures: [] });
        }),
    });
    const lease = await manager.acquire({ ...who, selector: {} });
    // The teardown never ends before `finish()`: an answer at all is one that did not wait for it.
    const released = await manager.release(lease.id, lease.fencingToken);
    expect(released).toMatchObject({
      lease: { state: 'released' },
      teardown: null,
      teardownPending: { waitedMs: 50 },
    });
    expect(await store.getTeardown(lease.id)).toBeNull();
    // Not recorded: the device stays blocked.
    await expectCode(manager.acquire({ ...who, selector: {} }), 'CONFLICT');
    finish();
    const deadline = performance.now() + 5000;
    while ((await store.getTeardown(lease.id)) === null && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(await store.getTeardown(lease.id)).toMatchObject({
      leaseId: lease.id,
      actions: ['closed helper session'],
    });
    expect((await manager.acquire({ ...who, selector: {} })).deviceId).toBe('d1');
  });

  it('renew extends within limits; a wrong token is CONFLICT', async () => {
    const { manager } = harness();
    const lease = await manager.acquire({ ...who, selector: {}, ttlSeconds: 10 });
    const renewed = await manager.renew(lease.id, lease.fencingToken, 60);
    expect(renewed.ttlSeconds).toBe(60);
    await expectCode(manager.renew(lease.id, lease.fencingToken, 3601), 'INVALID_ARGUMENT');
    await expectCode(manager.renew(lease.id, lease.fencingToken + 1, 60), 'CONFLICT');
    await expectCode(manager.release(lease.id, lease.fencingToken + 1), 'CONFLICT');
  });

  it('expiry tears each expired lease down exactly once and records it (passes driven directly)', async () => {
    const clock = new FakeClock();
    const { manager, store, teardowns } = harness({ clock });
    const a = await manager.acquire({ ...who, selector: {}, ttlSeconds: 10 });
    const b = await manager.acquire({ ...who, selector: {}, ttlSeconds: 20 });
    expect(await manager.expireOnce()).toBe(0);
    clock.advance(10_000);
    expect(await manager.expireOnce()).toBe(1);
    expect(teardowns).toHaveLength(1);
    expect(teardowns[0]).toMatchObject({ reason: 'expired', lease: { id: a.id } });
    expect(await store.getTeardown(a.id)).toMatchObject({ reason: 'expired', node: 'node-a', failures: [] });
    expect((await manager.list()).map((l) => l.id)).toEqual([b.id]);
    // Later passes do not tear it down again.
    expect(await manager.expireOnce()).toBe(0);
    expect(await manager.expireOnce()).toBe(0);
    expect(teardowns).toHaveLength(1);
    clock.advance(10_000);
    expect(await manager.expireOnce()).toBe(1);
    expect(await manager.expireOnce()).toBe(0);
    expect(teardowns.map((t) => t.lease.id)).toEqual([a.id, b.id]);
    expect(await manager.activeCount()).toBe(0);
  });

  it('the expiry loop runs the passes: started, it tears an expired lease down; stopped, it is idle', async () => {
    const clock = new FakeClock();
    const { manager, teardowns } = harness({ clock, expiryIntervalMs: 5 });
    const a = await manager.acquire({ ...who, selector: {}, ttlSeconds: 10 });
    manager.start();
    clock.advance(10_000);
    await waitFor(() => teardowns.length === 1);
    expect(teardowns[0]).toMatchObject({ reason: 'expired', lease: { id: a.id } });
    await manager.stop();
    // stop() waited for the running pass; a lease that expires now is torn down only when asked.
    await manager.acquire({ ...who, selector: {}, ttlSeconds: 10 });
    clock.advance(10_000);
    expect(teardowns).toHaveLength(1);
    expect(await manager.expireOnce()).toBe(1);
    expect(teardowns).toHaveLength(2);
  });

  it('teardown failures (reported or thrown) quarantine the device before it is freed', async () => {
    let mode: 'report' | 'throw' = 'report';
    let freeAtQuarantine: boolean | undefined;
    const h: Harness = harness({
      devices: ['d1'],
      teardown: async () => {
        if (mode === 'throw') throw new Error('adb gone');
        return { actions: ['closed helper session'], failures: ['remove forward tcp:41234: device offline'] };
      },
      quarantine: async (deviceId, reason) => {
        h.quarantined.push({ deviceId, reason });
        freeAtQuarantine =
          (await h.store.acquire({ ...who, ttlSeconds: 5, selector: {}, candidates: ['d1'] })) !== null;
      },
    });
    const lease = await h.manager.acquire({ ...who, selector: {} });
    const { teardown } = await h.manager.release(lease.id);
    expect(teardown!.failures).toEqual(['remove forward tcp:41234: device offline']);
    expect(teardown!.actions).toEqual(['closed helper session', 'quarantined device']);
    expect(h.quarantined).toEqual([{ deviceId: 'd1', reason: expect.stringContaining('device offline') }]);
    expect(freeAtQuarantine).toBe(false);

    mode = 'throw';
    const second = await h.manager.acquire({ ...who, selector: {} });
    const thrown = await h.manager.release(second.id);
    expect(thrown.teardown!.failures).toEqual(['teardown threw: adb gone']);
    expect(h.quarantined).toHaveLength(2);
    expect((await h.store.getTeardown(second.id))?.failures).toEqual(['teardown threw: adb gone']);
  });
});

/** Poll until `predicate` holds (a positive: it never passes by waiting alone). */
async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!(await predicate())) {
    if (performance.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('teardown on the owner node', () => {
  /** Two managers (node-a, node-b) over one store; `owner` says which node drives d1. */
  function pair(owner: { of: string | null }, extra: Partial<LeaseManagerOptions> = {}) {
    const store = new MemoryLeaseStore();
    const ran: Record<string, Array<{ lease: string; reason: string }>> = { 'node-a': [], 'node-b': [] };
    const make = (node: string) => {
      const manager = new LeaseManager({
        store,
        node,
        devices: {
          match: async () => ({ matching: ['d1'], available: ['d1'] }),
          ownerOf: async () => owner.of,
        },
        teardown: {
          closeLease: async (lease, reason) => {
            ran[node]!.push({ lease: lease.id, reason });
            return { actions: ['closed helper session'], failures: [] };
          },
        },
        ...extra,
      });
      managers.push(manager);
      return manager;
    };
    return { store, ran, a: make('node-a'), b: make('node-b') };
  }
  const acquire = { selector: {}, tenant: 't', holder: 'h' };

  it('a release on a non-owner defers the teardown; the owner runs it exactly once and records it', async () => {
    const { store, ran, a, b } = pair({ of: 'node-a' });
    const lease = await b.acquire(acquire);
    const released = await b.release(lease.id);
    expect(released.teardown!.actions).toEqual([
      'deferred to the owner node node-a (it runs and records the teardown)',
    ]);
    expect(ran['node-b']).toEqual([]);
    expect(await b.runDeferredOnce()).toBe(0); // not node-b's device
    expect(await Promise.all([a.runDeferredOnce(), a.runDeferredOnce()])).toEqual(
      expect.arrayContaining([1, 0]),
    );
    expect(ran['node-a']).toEqual([{ lease: lease.id, reason: 'released' }]);
    await waitFor(async () => (await store.getTeardown(lease.id)) !== null); // runs in the background
    expect(await store.getTeardown(lease.id)).toMatchObject({
      node: 'node-a',
      actions: ['closed helper session'],
    });
    // The device is free again once the owner recorded the teardown.
    expect((await b.acquire(acquire)).fencingToken).toBe(lease.fencingToken + 1);
  });

  it('the owner runs a teardown deferred to it at once on the store wake-up, not at its next periodic pass', async () => {
    // No periodic pass within the test: after the start-up passes only the wake-up can run it.
    const { store, ran, a, b } = pair({ of: 'node-a' }, { expiryIntervalMs: POLL_NEVER_MS });
    const read = store.deferredTeardowns.bind(store);
    let answered = 0;
    store.deferredTeardowns = async () => {
      const deferred = await read();
      answered++;
      return deferred;
    };
    a.start();
    b.start();
    // Both start-up passes read the (empty) list: they cannot run what is deferred after it.
    await waitFor(() => answered === 2);
    const lease = await b.acquire(acquire);
    await b.release(lease.id);
    await waitFor(() => ran['node-a']!.length === 1);
    expect(ran['node-a']).toEqual([{ lease: lease.id, reason: 'released' }]);
    expect(ran['node-b']).toEqual([]);
  });

  it('after a takeover the new owner runs the teardowns deferred to the dead one', async () => {
    const owner = { of: 'node-a' as string | null };
    const { ran, a, b } = pair(owner);
    const lease = await a.acquire({ ...acquire, ttlSeconds: 1 });
    owner.of = 'node-dead';
    await b.release(lease.id);
    expect(await a.runDeferredOnce()).toBe(0);
    owner.of = 'node-b'; // node-b took the device over
    expect(await b.runDeferredOnce()).toBe(1);
    expect(ran['node-b']).toEqual([{ lease: lease.id, reason: 'released' }]);
  });

  it('with no device record (removed) the teardown runs where the lease ended', async () => {
    const { ran, b } = pair({ of: null });
    const lease = await b.acquire(acquire);
    expect((await b.release(lease.id)).teardown!.node).toBe('node-b');
    expect(ran['node-b']).toHaveLength(1);
  });
});

describe('deferred teardowns never stop lease expiry', () => {
  const acquire = { selector: {}, tenant: 't', holder: 'h' };

  it('a failing read of the deferred teardowns does not skip the expiry pass', async () => {
    const clock = new FakeClock();
    class BrokenDeferred extends MemoryLeaseStore {
      override async deferredTeardowns(): Promise<never> {
        throw new Error('deferred teardown: owner is missing or invalid');
      }
    }
    const store = new BrokenDeferred({ now: clock.now });
    const expired: string[] = [];
    const manager = new LeaseManager({
      store,
      node: 'node-a',
      now: clock.now,
      expiryIntervalMs: 10,
      devices: {
        match: async () => ({ matching: ['d1'], available: ['d1'] }),
        ownerOf: async () => 'node-a',
      },
      teardown: {
        closeLease: async (lease) => {
          expired.push(lease.id);
          return { actions: [], failures: [] };
        },
      },
    });
    managers.push(manager);
    const lease = await manager.acquire({ ...acquire, ttlSeconds: 1 });
    clock.advance(2_000);
    manager.start();
    await waitFor(() => expired.length === 1);
    expect(expired).toEqual([lease.id]);
    expect((await store.get(lease.id))?.state).toBe('expired');
  });

  it('a bad deferred record is removed and the good ones still run; the pass does not wait for them', async () => {
    /** A store holding one record this version cannot read (e.g. written by a newer node). */
    class WithBadRecord extends MemoryLeaseStore {
      bad = true;
      override async deferredTeardowns(): Promise<DeferredTeardowns> {
        const { items, invalid } = await super.deferredTeardowns();
        const extra = this.bad
          ? [{ leaseId: 'bad-lease', problem: 'deferred teardown: reason is missing or invalid' }]
          : [];
        return { items, invalid: [...invalid, ...extra] };
      }
      override async takeDeferredTeardown(leaseId: string): Promise<boolean> {
        if (leaseId !== 'bad-lease') return super.takeDeferredTeardown(leaseId);
        const had = this.bad;
        this.bad = false;
        return had;
      }
    }
    const store = new WithBadRecord();
    let finish: () => void = () => undefined;
    const ran: string[] = [];
    const manager = new LeaseManager({
      store,
      node: 'node-a',
      devices: {
        match: async () => ({ matching: ['d1'], available: ['d1'] }),
        ownerOf: async () => 'node-a',
      },
      teardown: {
        closeLease: async (lease) => {
          ran.push(lease.id);
          await new Promise<void>((resolve) => {
            finish = resolve;
          });
          return { actions: ['slow'], failures: [] };
        },
      },
    });
    managers.push(manager);
    const lease = await manager.acquire(acquire);
    const ended = (await store.release(lease.id)) as Lease;
    await store.deferTeardown({
      lease: ended,
      reason: 'released',
      from: 'node-b',
      owner: 'node-a',
      deferredAt: Date.now(),
    });
    // Resolves while the (slow) teardown still runs: the expiry pass is not held up by it.
    expect(await manager.runDeferredOnce()).toBe(1);
    expect(ran).toEqual([lease.id]);
    // The bad record is gone; the good one stays (claimed) until its teardown is recorded.
    expect((await store.deferredTeardowns()).invalid).toEqual([]);
    expect((await store.deferredTeardowns()).items).toHaveLength(1);
    expect(await store.getTeardown(lease.id)).toBeNull();
    finish();
    await waitFor(async () => (await store.getTeardown(lease.id)) !== null);
    await waitFor(async () => (await store.deferredTeardowns()).items.length === 0);
  });

  it('a deferred record older than the age cap is dropped, not run', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore({ now: clock.now });
    const ran: string[] = [];
    const manager = new LeaseManager({
      store,
      node: 'node-a',
      now: clock.now,
      deferredMaxAgeSeconds: 60,
      devices: {
        match: async () => ({ matching: ['d1'], available: ['d1'] }),
        ownerOf: async () => 'node-a',
      },
      teardown: {
        closeLease: async (lease) => {
          ran.push(lease.id);
          return { actions: [], failures: [] };
        },
      },
    });
    managers.push(manager);
    const lease = await manager.acquire(acquire);
    const ended = (await store.release(lease.id)) as Lease;
    await store.deferTeardown({
      lease: ended,
      reason: 'released',
      from: 'node-b',
      owner: 'node-a',
      deferredAt: clock.now(),
    });
    clock.advance(61_000);
    expect(await manager.runDeferredOnce()).toBe(0);
    expect(ran).toEqual([]);
    expect((await store.deferredTeardowns()).items).toEqual([]);
  });
});

describe('owner lookup failure at teardown', () => {
  it('defers the teardown instead of running it on a node that may not drive the device; the owner runs it', async () => {
    const store = new MemoryLeaseStore();
    const owner = { of: 'node-a' as string | null, failing: false };
    const ran: Record<string, string[]> = { 'node-a': [], 'node-b': [] };
    const make = (node: string) => {
      const manager = new LeaseManager({
        store,
        node,
        devices: {
          match: async () => ({ matching: ['d1'], available: ['d1'] }),
          ownerOf: async () => {
            if (owner.failing) throw new Error('device store unreachable');
            return owner.of;
          },
        },
        teardown: {
          closeLease: async (lease) => {
            ran[node]!.push(lease.id);
            return { actions: ['closed helper session'], failures: [] };
          },
        },
      });
      managers.push(manager);
      return manager;
    };
    const a = make('node-a');
    const b = make('node-b');
    const lease = await b.acquire({ selector: {}, tenant: 't', holder: 'h' });
    owner.failing = true;
    const released = await b.release(lease.id);
    expect(ran['node-b']).toEqual([]);
    expect(released.teardown!.failures).toEqual([]);
    expect(released.teardown!.actions.join(' ')).toMatch(/deferred to the device's owner/);
    // While the lookup fails nobody runs it (and the pass does not throw); then the owner does.
    expect(await a.runDeferredOnce()).toBe(0);
    owner.failing = false;
    expect(await b.runDeferredOnce()).toBe(0);
    expect(await a.runDeferredOnce()).toBe(1);
    expect(ran).toEqual({ 'node-a': [lease.id], 'node-b': [] });
  });
});

describe('a deferred teardown is never lost', () => {
  const acquire = { selector: {}, tenant: 't', holder: 'h' };
  const devices = (owner: string) => ({
    match: async () => ({ matching: ['d1'], available: ['d1'] }),
    ownerOf: async () => owner,
  });

  it("stays in the store until its teardown is recorded; a crashed claimant's claim is re-taken when stale", async () => {
    const clock = new FakeClock();
    let recordFails = 1;
    let lookedUp = 0;
    class FlakyRecord extends MemoryLeaseStore {
      override async recordTeardown(record: TeardownRecord): Promise<void> {
        if (recordFails-- > 0) throw new Error('store blip');
        return super.recordTeardown(record);
      }
      override async getTeardown(leaseId: string): Promise<TeardownRecord | null> {
        const record = await super.getTeardown(leaseId);
        lookedUp++;
        return record;
      }
    }
    const store = new FlakyRecord({ now: clock.now });
    const ran: string[] = [];
    const manager = new LeaseManager({
      store,
      node: 'node-a',
      now: clock.now,
      deferredClaimStaleSeconds: 60,
      devices: devices('node-a'),
      teardown: {
        closeLease: async (lease) => {
          ran.push(lease.id);
          return { actions: ['restored settings'], failures: [] };
        },
      },
    });
    managers.push(manager);
    const lease = await manager.acquire(acquire);
    const ended = (await store.release(lease.id)) as Lease;
    await store.deferTeardown({
      lease: ended,
      reason: 'released',
      from: 'node-b',
      owner: 'node-a',
      deferredAt: clock.now(),
    });
    // The first run cannot record its teardown: the record stays (claimed), nothing is lost.
    expect(await manager.runDeferredOnce()).toBe(1);
    await waitFor(() => ran.length === 1);
    // The run looked for its record (not there) and so decided to keep the deferral.
    await waitFor(() => lookedUp === 1);
    expect((await store.deferredTeardowns()).items).toHaveLength(1);
    expect(await manager.runDeferredOnce()).toBe(0); // claimed, not stale yet
    clock.advance(61_000);
    expect(await manager.runDeferredOnce()).toBe(1);
    await waitFor(async () => (await store.getTeardown(lease.id)) !== null);
    await waitFor(async () => (await store.deferredTeardowns()).items.length === 0);
    expect(ran).toEqual([lease.id, lease.id]);
  });

  it('a failed deferral is retried, not just logged', async () => {
    let deferFails = 2;
    class FlakyDefer extends MemoryLeaseStore {
      override async deferTeardown(item: DeferredTeardown): Promise<void> {
        if (deferFails-- > 0) throw new Error('store blip');
        return super.deferTeardown(item);
      }
    }
    const store = new FlakyDefer();
    const manager = new LeaseManager({
      store,
      node: 'node-b',
      devices: devices('node-a'),
      teardown: { closeLease: async () => ({ actions: [], failures: [] }) },
    });
    managers.push(manager);
    const lease = await manager.acquire(acquire);
    const released = await manager.release(lease.id);
    expect(released.teardown!.failures).toEqual([]);
    expect((await store.deferredTeardowns()).items.map((i) => i.lease.id)).toEqual([lease.id]);
  });
});

describe('stop() waits for deferred teardowns a wake-up started', () => {
  function gate(): { wait: Promise<void>; open: () => void } {
    let open!: () => void;
    const wait = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { wait, open };
  }

  it('does not resolve while a teardown the wake-up pass claimed still runs; no pass starts after it', async () => {
    const store = new MemoryLeaseStore();
    const lookup = gate();
    const teardown = gate();
    let lookups = 0;
    let started = 0;
    let closed = 0;
    let answered = 0;
    const read = store.deferredTeardowns.bind(store);
    store.deferredTeardowns = async () => {
      const deferred = await read();
      answered++;
      return deferred;
    };
    let unsubscribed = false;
    const subscribe = store.onWakeup.bind(store);
    store.onWakeup = async (listener) => {
      const stop = await subscribe(listener);
      return async () => {
        await stop();
        unsubscribed = true;
      };
    };
    const manager = new LeaseManager({
      store,
      node: 'node-a',
      expiryIntervalMs: 60_000,
      devices: {
        match: async () => ({ matching: ['d1'], available: ['d1'] }),
        ownerOf: async () => {
          lookups++;
          await lookup.wait;
          return 'node-a';
        },
      },
      teardown: {
        closeLease: async () => {
          started++;
          await teardown.wait;
          closed++;
          return { actions: ['closed'], failures: [] };
        },
      },
    });
    managers.push(manager);
    manager.start();
    await waitFor(() => answered === 1); // the start-up pass found nothing
    onTestFinished(() => {
      lookup.open();
      teardown.open();
    });
    const item = (id: string): DeferredTeardown => ({
      lease: { id, deviceId: 'd1', fencingToken: 1, state: 'released' } as Lease,
      reason: 'released',
      from: 'node-b',
      owner: 'node-a',
      deferredAt: Date.now(),
    });
    await store.deferTeardown(item('lease_one')); // the wake-up starts a pass: it waits in the owner lookup
    await waitFor(() => lookups === 1);
    let stopped = false;
    const stopping = manager.stop().then(() => {
      stopped = true;
    });
    await waitFor(() => unsubscribed); // stop() is past unsubscribing
    lookup.open(); // the pass claims the teardown and starts it
    await waitFor(() => started === 1);
    expect(stopped).toBe(false);
    expect(closed).toBe(0);
    teardown.open();
    await stopping;
    expect(closed).toBe(1);
    expect(await store.getTeardown('lease_one')).not.toBeNull();
    // Stopped: a later pass (a message that raced the unsubscribe) starts nothing; nothing is lost.
    await store.deferTeardown(item('lease_two'));
    expect(await manager.runDeferredOnce()).toBe(0);
    expect((await store.deferredTeardowns()).items.map((i) => i.lease.id)).toEqual(['lease_two']);
  });
});

describe('only a deferred teardown starts a deferred-teardown pass', () => {
  it('waiter wake-ups (acquired, left) run no pass; a deferral runs one', async () => {
    const store = new MemoryLeaseStore();
    let passes = 0;
    let answered = 0;
    const read = store.deferredTeardowns.bind(store);
    store.deferredTeardowns = async () => {
      passes++;
      const deferred = await read();
      answered++;
      return deferred;
    };
    const manager = new LeaseManager({
      store,
      node: 'node-a',
      expiryIntervalMs: 60_000,
      devices: {
        match: async () => ({ matching: ['d1'], available: ['d1'] }),
        ownerOf: async () => 'node-a',
      },
      teardown: { closeLease: async () => ({ actions: [], failures: [] }) },
    });
    managers.push(manager);
    manager.start();
    await waitFor(() => answered === 1); // the start-up pass read the list: it is over
    for (let i = 0; i < 20; i++) {
      await store.enqueue('["q"]', `w${i}`, 30);
      await store.dequeue('["q"]', `w${i}`); // a queue's head moved: a wake-up
    }
    // The memory store calls its listeners inside dequeue: a pass a wake-up started has read already.
    expect(passes, '20 waiter wake-ups').toBe(1);
    await store.deferTeardown({
      lease: { id: 'lease_d', deviceId: 'd1', fencingToken: 1, state: 'released' } as Lease,
      reason: 'released',
      from: 'node-b',
      owner: 'node-a',
      deferredAt: Date.now(),
    });
    await waitFor(() => passes === 2);
  });
});
