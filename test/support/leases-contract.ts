/**
 * The LeaseStore contract, written once and run against every store: the memory store in
 * test/unit/leases-memory.test.ts, the Redis store (real Redis) in test/integration/leases-redis.test.ts
 * (pure: no sockets, so unit tests may import it).
 * Each test builds a fresh store on a fake clock it controls.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import type { Lease, LeaseStore, TeardownRecord } from '../../src/leases/types.ts';

export interface StoreFactoryOptions {
  now: () => number;
}
export type StoreFactory = (options: StoreFactoryOptions) => Promise<LeaseStore>;

export const T0 = 1_700_000_000_000;

export class FakeClock {
  t = T0;
  readonly now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

const base = { tenant: 't1', holder: 'alice', ttlSeconds: 60, selector: { labels: { pool: 'a' } } };

export async function expectCode(promise: Promise<unknown>, code: string): Promise<BridgeError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected BridgeError ${code}, resolved`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BridgeError);
  expect((err as BridgeError).code).toBe(code);
  return err as BridgeError;
}

export function teardownOf(
  lease: Lease,
  clock: FakeClock,
  extra: Partial<TeardownRecord> = {},
): TeardownRecord {
  return {
    leaseId: lease.id,
    deviceId: lease.deviceId,
    reason: 'released',
    startedAt: clock.t,
    finishedAt: clock.t,
    actions: ['closed helper session'],
    failures: [],
    node: 'n1',
    ...extra,
  };
}

export function leaseStoreContract(name: string, make: StoreFactory, options: { modelRuns: number }): void {
  describe(`LeaseStore contract: ${name}`, () => {
    async function setup(): Promise<{ store: LeaseStore; clock: FakeClock }> {
      const clock = new FakeClock();
      const store = await make({ now: clock.now });
      return { store, clock };
    }

    it('leases the first free candidate in order, then the next; null when none is free', async () => {
      const { store, clock } = await setup();
      const a = await store.acquire({ ...base, candidates: ['d1', 'd2'] });
      expect(a).toMatchObject({
        deviceId: 'd1',
        tenant: 't1',
        holder: 'alice',
        state: 'active',
        acquiredAt: clock.t,
        expiresAt: clock.t + 60_000,
        ttlSeconds: 60,
        selector: { labels: { pool: 'a' } },
        // A device's first token is the time in microseconds.
        fencingToken: clock.t * 1000,
      });
      expect(a?.id).toMatch(/^lease_[A-Za-z0-9_-]{20}$/);
      const b = await store.acquire({ ...base, candidates: ['d1', 'd2'] });
      expect(b?.deviceId).toBe('d2');
      expect(await store.acquire({ ...base, candidates: ['d1', 'd2'] })).toBeNull();
      expect(await store.acquire({ ...base, candidates: [] })).toBeNull();
      expect(await store.get(a?.id ?? '')).toEqual(a);
      expect(await store.leaseOfDevice('d2')).toEqual(b);
      expect(await store.leaseOfDevice('d3')).toBeNull();
      expect(await store.get('lease_unknown')).toBeNull();
      await store.close();
    });

    it('the lease quota is checked in the grant: held leases count until released, expired or released empty', async () => {
      const { store, clock } = await setup();
      const devices = Array.from({ length: 10 }, (_, i) => `d${i + 1}`);
      const quota = { ...base, candidates: devices, leaseQuota: 2 };
      const a = (await store.acquire(quota)) as Lease;
      const b = (await store.acquire(quota)) as Lease;
      expect([a.deviceId, b.deviceId]).toEqual(['d1', 'd2']);
      const refused = await expectCode(store.acquire(quota), 'RATE_LIMITED');
      expect(refused.details).toEqual({ quota: 'leases', limit: 2 });
      expect(refused.message).toBe('tenant t1 holds 2 leases, its quota is 2: release one first');
      // Also with no candidate free: refused, not queued behind a device.
      await expectCode(store.acquire({ ...quota, candidates: [] }), 'RATE_LIMITED');
      // Another tenant, and a request without a quota, are not counted against t1.
      const other = (await store.acquire({ ...quota, tenant: 't2' })) as Lease;
      expect(other.deviceId).toBe('d3');
      // Each way a lease ends gives its place back: release ...
      await store.release(a.id, a.fencingToken);
      const c = (await store.acquire(quota)) as Lease;
      await expectCode(store.acquire(quota), 'RATE_LIMITED');
      // ... release with an empty teardown ...
      await store.releaseEmpty(c.id, c.fencingToken, teardownOf(c, clock));
      const d = (await store.acquire(quota)) as Lease;
      expect(d).not.toBeNull();
      // ... and expiry (once claimed; an active lease past its expiresAt still counts until then).
      clock.advance(61_000);
      await expectCode(store.acquire(quota), 'RATE_LIMITED');
      const expired = (await store.claimExpired(clock.t)).map((l) => l.id);
      expect(expired.sort()).toEqual([b.id, d.id, other.id].sort());
      expect(await store.acquire(quota)).not.toBeNull();
      expect(await store.acquire(quota)).not.toBeNull();
      await expectCode(store.acquire(quota), 'RATE_LIMITED');
      await store.close();
    });

    it('the waiter quota is checked when a waiter joins: a queued waiter refreshes, another is refused', async () => {
      const { store, clock } = await setup();
      const info = (tenant: string) => ({ selector: base.selector, tenant, node: 'n1', since: clock.t });
      const quota = { waiterQuota: 2 };
      await store.enqueue('q1', 'w1', 30, info('t1'), quota);
      await store.enqueue('q2', 'w2', 30, info('t1'), quota);
      const refused = await expectCode(store.enqueue('q1', 'w3', 30, info('t1'), quota), 'RATE_LIMITED');
      expect(refused.details).toEqual({ quota: 'waiters', limit: 2 });
      expect(refused.message).toBe(
        'tenant t1 has 2 waiters queued, its quota is 2: wait for one to end first',
      );
      expect((await store.listWaiters({ tenant: 't1' })).map((w) => w.waiterId).sort()).toEqual(['w1', 'w2']);
      // A waiter already queued refreshes its deadline at its quota; another tenant queues.
      await store.enqueue('q1', 'w1', 30, info('t1'), quota);
      await store.enqueue('q1', 'x1', 30, info('t2'), quota);
      // A waiter that leaves (dequeued) or whose deadline passed no longer counts.
      await store.dequeue('q2', 'w2');
      await store.enqueue('q1', 'w3', 30, info('t1'), quota);
      await expectCode(store.enqueue('q1', 'w4', 30, info('t1'), quota), 'RATE_LIMITED');
      clock.advance(31_000);
      await store.enqueue('q2', 'w4', 30, info('t1'), quota);
      await store.enqueue('q2', 'w5', 30, info('t1'), quota);
      await expectCode(store.enqueue('q2', 'w6', 30, info('t1'), quota), 'RATE_LIMITED');
      await store.close();
    });

    it('stores the leased device id as given, whichever candidate won (serials with `:`, `/`, non-ASCII)', async () => {
      const { store } = await setup();
      const serials = ['192.168.1.7:5555', 'usb:1-2/ü', 'émulateur-5554'];
      for (const [i, serial] of serials.entries()) {
        const lease = (await store.acquire({ ...base, candidates: serials })) as Lease;
        expect(lease.deviceId).toBe(serial);
        expect((await store.get(lease.id))?.deviceId).toBe(serials[i]);
        expect((await store.leaseOfDevice(serial))?.id).toBe(lease.id);
      }
      await store.close();
    });

    it('fencing tokens strictly increase per device across leases; old tokens are refused', async () => {
      const { store, clock } = await setup();
      const tokens: number[] = [];
      let previous: Lease | null = null;
      for (let i = 0; i < 4; i++) {
        const lease = await store.acquire({ ...base, candidates: ['d1'] });
        if (!lease) throw new Error('expected a lease');
        tokens.push(lease.fencingToken);
        if (previous) {
          await expectCode(store.checkFence('d1', previous.id, previous.fencingToken), 'LEASE_EXPIRED');
          await expectCode(store.checkFence('d1', lease.id, previous.fencingToken), 'CONFLICT');
        }
        expect(await store.checkFence('d1', lease.id, lease.fencingToken)).toEqual(lease);
        if (i % 2 === 0) {
          expect((await store.release(lease.id, lease.fencingToken))?.state).toBe('released');
        } else {
          clock.advance(60_000);
          expect((await store.claimExpired(clock.t)).map((l) => l.id)).toEqual([lease.id]);
        }
        await store.recordTeardown(teardownOf(lease, clock));
        previous = lease;
      }
      const first = T0 * 1000;
      expect(tokens).toEqual([first, first + 1, first + 2, first + 3]);
      // Another device has its own counter (started at its first lease's time).
      expect((await store.acquire({ ...base, candidates: ['d2'] }))?.fencingToken).toBe(clock.t * 1000);
      await store.close();
    });

    it('checkFence: unknown lease NOT_FOUND, wrong device CONFLICT, past expiresAt LEASE_EXPIRED', async () => {
      const { store, clock } = await setup();
      const lease = await store.acquire({ ...base, ttlSeconds: 10, candidates: ['d1'] });
      if (!lease) throw new Error('expected a lease');
      const notFound = await expectCode(store.checkFence('d1', 'lease_nope', 1), 'NOT_FOUND');
      expect(notFound.details).toMatchObject({ leaseId: 'lease_nope' });
      await expectCode(store.checkFence('d2', lease.id, lease.fencingToken), 'CONFLICT');
      clock.advance(10_000);
      await expectCode(store.checkFence('d1', lease.id, lease.fencingToken), 'LEASE_EXPIRED');
      await store.close();
    });

    it('renew extends an active lease; refuses wrong token, unknown id, ended or overdue leases', async () => {
      const { store, clock } = await setup();
      const lease = await store.acquire({ ...base, ttlSeconds: 10, candidates: ['d1'] });
      if (!lease) throw new Error('expected a lease');
      clock.advance(5_000);
      const renewed = await store.renew(lease.id, lease.fencingToken, 30);
      expect(renewed.expiresAt).toBe(clock.t + 30_000);
      expect(renewed.ttlSeconds).toBe(30);
      expect(renewed.fencingToken).toBe(lease.fencingToken);
      // The old expiry no longer applies.
      clock.advance(10_000);
      expect(await store.claimExpired(clock.t)).toEqual([]);
      await expectCode(store.renew(lease.id, lease.fencingToken + 1, 30), 'CONFLICT');
      await expectCode(store.renew('lease_nope', 1, 30), 'NOT_FOUND');
      clock.advance(20_000);
      await expectCode(store.renew(lease.id, lease.fencingToken, 30), 'LEASE_EXPIRED');
      await store.claimExpired(clock.t);
      await expectCode(store.renew(lease.id, lease.fencingToken, 30), 'LEASE_EXPIRED');
      await expectCode(store.renew(lease.id, lease.fencingToken, 0), 'INVALID_ARGUMENT');
      await store.close();
    });

    it('release: wrong token CONFLICT (lease stays), then ends once; device blocked until teardown recorded', async () => {
      const { store, clock } = await setup();
      const lease = await store.acquire({ ...base, candidates: ['d1'] });
      if (!lease) throw new Error('expected a lease');
      await expectCode(store.release(lease.id, lease.fencingToken + 1), 'CONFLICT');
      expect((await store.get(lease.id))?.state).toBe('active');
      clock.advance(1_000);
      const ended = await store.release(lease.id);
      expect(ended).toMatchObject({ id: lease.id, state: 'released', endedAt: clock.t });
      expect(await store.release(lease.id)).toBeNull();
      expect(await store.release('lease_nope')).toBeNull();
      expect(await store.list()).toEqual([]);
      expect(await store.leaseOfDevice('d1')).toBeNull();
      // Teardown is still running: the device is not handed out yet.
      expect(await store.acquire({ ...base, candidates: ['d1'] })).toBeNull();
      const record = teardownOf(lease, clock, { failures: ['forward tcp:1 still bound'] });
      await store.recordTeardown(record);
      expect(await store.getTeardown(lease.id)).toEqual(record);
      expect(await store.getTeardown('lease_nope')).toBeNull();
      expect((await store.acquire({ ...base, candidates: ['d1'] }))?.fencingToken).toBe(
        lease.fencingToken + 1,
      );
      await store.close();
    });

    it('fencing tokens stay above every earlier one when the store starts empty (its data lost)', async () => {
      const { store, clock } = await setup();
      const tokens: number[] = [];
      for (let i = 0; i < 5; i++) {
        const lease = await store.acquire({ ...base, candidates: ['d1'] });
        if (!lease) throw new Error('expected a lease');
        tokens.push(lease.fencingToken);
        await store.release(lease.id);
        await store.recordTeardown(teardownOf(lease, clock));
      }
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
      await store.close();
      // An empty store standing in for the same one after its data was lost, a moment later.
      clock.advance(1);
      const fresh = await make({ now: clock.now });
      const after = await fresh.acquire({ ...base, candidates: ['d1'] });
      expect(after?.fencingToken).toBeGreaterThan(Math.max(...tokens));
      expect(Number.isSafeInteger(after?.fencingToken)).toBe(true);
      await fresh.close();
    });

    it('releaseEmpty: ends the lease and records its empty teardown at once (device freed); token checked; null when not active', async () => {
      const { store, clock } = await setup();
      const lease = await store.acquire({ ...base, candidates: ['d1'] });
      if (!lease) throw new Error('expected a lease');
      const record = teardownOf(lease, clock, { actions: [] });
      await expectCode(store.releaseEmpty(lease.id, lease.fencingToken + 1, record), 'CONFLICT');
      expect((await store.get(lease.id))?.state).toBe('active');
      expect(await store.getTeardown(lease.id)).toBeNull();
      // A record of another lease is a caller bug: refused before anything changes.
      await expectCode(
        store.releaseEmpty(lease.id, lease.fencingToken, { ...record, leaseId: 'lease_x' }),
        'INTERNAL',
      );
      expect((await store.get(lease.id))?.state).toBe('active');
      clock.advance(1_000);
      const done = await store.releaseEmpty(lease.id, lease.fencingToken, record);
      const ended = { ...lease, state: 'released', endedAt: clock.t };
      expect(done).toEqual({ lease: ended, teardown: record });
      expect(await store.get(lease.id)).toEqual(ended);
      expect(await store.getTeardown(lease.id)).toEqual(record);
      expect(await store.listTeardowns({ limit: 10 })).toEqual([{ lease: ended, teardown: record }]);
      expect(await store.listTeardowns({ tenant: 't1', limit: 10 })).toEqual([
        { lease: ended, teardown: record },
      ]);
      expect(await store.list()).toEqual([]);
      // Freed in the same step: the next lease of the device comes at once, with the next token.
      const next = await store.acquire({ ...base, candidates: ['d1'] });
      expect(next?.fencingToken).toBe(lease.fencingToken + 1);
      expect(await store.releaseEmpty(lease.id, undefined, record)).toBeNull();
      expect(
        await store.releaseEmpty('lease_nope', undefined, { ...record, leaseId: 'lease_nope' }),
      ).toBeNull();
      // Without a token it releases too.
      const r2 = teardownOf(next as Lease, clock, { actions: [] });
      expect((await store.releaseEmpty((next as Lease).id, undefined, r2))?.teardown).toEqual(r2);
      await store.close();
    });

    it('releaseEmpty falls back to the pending release: another device named, or a device-state journal of the lease', async () => {
      const { store, clock } = await setup();
      const a = await store.acquire({ ...base, candidates: ['d1'] });
      const b = await store.acquire({ ...base, candidates: ['d2'] });
      if (!a || !b) throw new Error('expected leases');
      await store.saveDeviceState(b.id, 'glass-a11y', { serial: 's2' });
      clock.advance(1_000);
      // The caller named d9: not the lease's device, so its teardown is not known to be empty.
      const wrong = await store.releaseEmpty(a.id, a.fencingToken, teardownOf(a, clock, { deviceId: 'd9' }));
      const journaled = await store.releaseEmpty(b.id, b.fencingToken, teardownOf(b, clock, { actions: [] }));
      for (const [got, lease] of [
        [wrong, a],
        [journaled, b],
      ] as const) {
        expect(got).toEqual({ lease: { ...lease, state: 'released', endedAt: clock.t }, teardown: null });
        expect((await store.get(lease.id))?.state).toBe('released');
        expect(await store.getTeardown(lease.id)).toBeNull();
        expect(await store.list()).not.toContainEqual(expect.objectContaining({ id: lease.id }));
        // Ended, teardown pending: the device is not handed out until a teardown is recorded.
        expect(await store.acquire({ ...base, candidates: [lease.deviceId] })).toBeNull();
        expect(await store.releaseEmpty(lease.id, undefined, teardownOf(lease, clock))).toBeNull();
      }
      expect(await store.listTeardowns({ limit: 10 })).toEqual([]);
      // The journal is left for the teardown to take.
      expect(await store.takeDeviceState(b.id)).toEqual({ 'glass-a11y': { serial: 's2' } });
      await store.recordTeardown(teardownOf(b, clock));
      expect((await store.acquire({ ...base, candidates: ['d2'] }))?.fencingToken).toBe(b.fencingToken + 1);
      await store.close();
    });

    it('listTeardowns: ended leases with their records, newest first, per tenant, bounded, within the retention', async () => {
      const { store, clock } = await setup();
      expect(await store.listTeardowns({ limit: 10 })).toEqual([]);
      const ended: Array<{ lease: Lease; teardown: TeardownRecord }> = [];
      for (const [i, tenant] of ['t1', 't2', 't1', 't1'].entries()) {
        const lease = await store.acquire({ ...base, tenant, candidates: [`d${i}`] });
        if (!lease) throw new Error('expected a lease');
        clock.advance(1_000);
        const released = await store.release(lease.id);
        const teardown = teardownOf(lease, clock, { reason: i === 1 ? 'expired' : 'released' });
        await store.recordTeardown(teardown);
        ended.push({ lease: released as Lease, teardown });
      }
      // An active lease and an ended one whose teardown is not recorded yet are not history.
      await store.acquire({ ...base, candidates: ['d9'] });
      const pending = await store.acquire({ ...base, candidates: ['d8'] });
      await store.release(pending?.id ?? '');
      const newestFirst = [...ended].reverse();
      expect(await store.listTeardowns({ limit: 10 })).toEqual(newestFirst);
      expect(await store.listTeardowns({ limit: 2 })).toEqual(newestFirst.slice(0, 2));
      expect(await store.listTeardowns({ tenant: 't1', limit: 10 })).toEqual(
        newestFirst.filter((e) => e.lease.tenant === 't1'),
      );
      expect(await store.listTeardowns({ tenant: 't2', limit: 10 })).toEqual([ended[1]]);
      expect(await store.listTeardowns({ tenant: 'nobody', limit: 10 })).toEqual([]);
      expect(await store.listTeardowns({ limit: 0 })).toEqual([]);
      expect((await store.listTeardowns({ limit: 1_000 })).length).toBe(4);
      clock.advance(7 * 24 * 3600 * 1000 + 1);
      expect(await store.listTeardowns({ limit: 10 })).toEqual([]);
      await store.close();
    });

    it('a device whose lease ended stays blocked until its teardown is recorded, however long that takes (released, expired, one-step fallback)', async () => {
      const { store, clock } = await setup();
      const released = (await store.acquire({ ...base, candidates: ['d1'] })) as Lease;
      const expired = (await store.acquire({ ...base, ttlSeconds: 1, candidates: ['d2'] })) as Lease;
      const fallback = (await store.acquire({ ...base, candidates: ['d3'] })) as Lease;
      await store.release(released.id);
      clock.advance(1_000);
      expect((await store.claimExpired(clock.t)).map((l) => l.id)).toEqual([expired.id]);
      const pending = await store.releaseEmpty(
        fallback.id,
        undefined,
        teardownOf(fallback, clock, { deviceId: 'd9' }),
      );
      expect(pending?.teardown).toBeNull();
      // A teardown that never finished (its node crashed or hung) must not hand a dirty device to
      // the next tenant: no time frees it — not minutes, not past the retention of ended leases.
      for (const ms of [119_999, 1, 3_600_000, 30 * 24 * 3600 * 1000]) {
        clock.advance(ms);
        for (const d of ['d1', 'd2', 'd3']) {
          expect(await store.acquire({ ...base, candidates: [d] })).toBeNull();
        }
      }
      for (const lease of [released, expired, fallback]) {
        await store.recordTeardown(teardownOf(lease, clock));
        const next = (await store.acquire({ ...base, candidates: [lease.deviceId] })) as Lease;
        expect(next.fencingToken).toBe(lease.fencingToken + 1);
        // A late second record of the old teardown must not free the device under its new holder.
        await store.recordTeardown(teardownOf(lease, clock));
        expect(await store.acquire({ ...base, candidates: [lease.deviceId] })).toBeNull();
        expect((await store.leaseOfDevice(lease.deviceId))?.id).toBe(next.id);
      }
      await store.close();
    });

    it('teardowns due: every ended lease is stamped (time, claimant) when it ends; only stale ones are claimed, re-stamped; recordTeardown removes them', async () => {
      const { store, clock } = await setup();
      const [r, e, f, fused, plain] = (await Promise.all(
        ['d1', 'd2', 'd3', 'd4', 'd5'].map((d) =>
          store.acquire({ ...base, ttlSeconds: d === 'd2' ? 1 : 60, candidates: [d] }),
        ),
      )) as [Lease, Lease, Lease, Lease, Lease];
      const t0 = clock.t;
      await store.release(r.id, r.fencingToken, 'node-a#1');
      clock.advance(1_000);
      expect((await store.claimExpired(clock.t, 100, 'node-b#1')).map((l) => l.id)).toEqual([e.id]);
      const fallback = teardownOf(f, clock, { deviceId: 'd9' });
      expect((await store.releaseEmpty(f.id, undefined, fallback, 'node-c#1'))?.teardown).toBeNull();
      // Recorded in the step that ended it: never due.
      const empty = teardownOf(fused, clock, { actions: [] });
      expect((await store.releaseEmpty(fused.id, undefined, empty, 'node-c#1'))?.teardown).toEqual(empty);
      await store.release(plain.id); // no claimant given: ''
      const t1 = clock.t;
      expect(await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-z#1')).toEqual([]);
      clock.advance(59_000); // r's stamp is 60 s old, the others' 59 s
      const first = await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-z#1');
      expect(first).toEqual([
        { lease: await store.get(r.id), reason: 'released', claimant: 'node-a#1', stampedAt: t0 },
      ]);
      expect(first[0]?.lease).toMatchObject({ id: r.id, state: 'released', endedAt: t0 });
      // Re-stamped by the claim: nobody else gets it until it is stale again.
      expect(await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-y#1')).toEqual([]);
      clock.advance(1_000);
      const second = await store.claimStalledTeardowns(clock.t, 60_000, 2, 'node-y#1');
      const third = await store.claimStalledTeardowns(clock.t, 60_000, 2, 'node-y#1');
      expect(second).toHaveLength(2); // the limit
      const rest = [...second, ...third].sort((a, b) => (a.lease.id < b.lease.id ? -1 : 1));
      const expected = [
        { lease: await store.get(e.id), reason: 'expired', claimant: 'node-b#1', stampedAt: t1 },
        { lease: await store.get(f.id), reason: 'released', claimant: 'node-c#1', stampedAt: t1 },
        { lease: await store.get(plain.id), reason: 'released', claimant: '', stampedAt: t1 },
      ].sort((a, b) => ((a.lease?.id ?? '') < (b.lease?.id ?? '') ? -1 : 1));
      expect(rest).toEqual(expected);
      // The oldest stamp first: r (re-stamped 1 s before the others) comes before them.
      clock.advance(60_000);
      expect(
        (await store.claimStalledTeardowns(clock.t, 60_000, 1, 'node-x#1')).map((d) => d.lease.id),
      ).toEqual([r.id]);
      // A recorded teardown is no longer due; the others stay due until theirs are recorded.
      await store.recordTeardown(teardownOf(r, clock));
      await store.recordTeardown(teardownOf(e, clock, { reason: 'expired' }));
      clock.advance(600_000);
      const left = await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-x#1');
      expect(left.map((d) => d.lease.id).sort()).toEqual([f.id, plain.id].sort());
      await store.recordTeardown(teardownOf(f, clock));
      await store.recordTeardown(teardownOf(plain, clock));
      clock.advance(600_000);
      expect(await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-x#1')).toEqual([]);
      for (const d of ['d1', 'd2', 'd3', 'd5']) {
        expect(await store.acquire({ ...base, candidates: [d] })).not.toBeNull();
      }
      await store.close();
    });

    it('touchTeardown refreshes the stamp of a due teardown while it runs; false once recorded (or never due)', async () => {
      const { store, clock } = await setup();
      const lease = (await store.acquire({ ...base, candidates: ['d1'] })) as Lease;
      expect(await store.touchTeardown(lease.id, clock.t, 'node-a#1')).toBe(false); // active
      expect(await store.touchTeardown('lease_nope', clock.t, 'node-a#1')).toBe(false);
      await store.release(lease.id, undefined, 'node-a#1');
      clock.advance(50_000);
      const touched = clock.t;
      expect(await store.touchTeardown(lease.id, clock.t, 'node-b#1')).toBe(true);
      clock.advance(50_000); // 100 s after the lease ended, 50 s after the touch
      expect(await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-z#1')).toEqual([]);
      clock.advance(10_000);
      expect(await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-z#1')).toEqual([
        { lease: await store.get(lease.id), reason: 'released', claimant: 'node-b#1', stampedAt: touched },
      ]);
      await store.recordTeardown(teardownOf(lease, clock));
      expect(await store.touchTeardown(lease.id, clock.t, 'node-b#1')).toBe(false);
      clock.advance(600_000);
      expect(await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-z#1')).toEqual([]);
      await store.close();
    });

    it('claimStalledTeardowns: many concurrent claimers, each due teardown handed out once per stale period', async () => {
      const { store, clock } = await setup();
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const lease = (await store.acquire({ ...base, candidates: [`d${i}`] })) as Lease;
        await store.release(lease.id, undefined, 'node-dead#1');
        ids.push(lease.id);
      }
      clock.advance(60_000);
      const claim = (round: string) =>
        Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.claimStalledTeardowns(clock.t, 60_000, 7, `node-${i}#${round}`),
          ),
        );
      const got = (await claim('a')).flat().map((d) => d.lease.id);
      expect(got.sort()).toEqual([...ids].sort()); // each exactly once
      expect((await claim('b')).flat()).toEqual([]);
      clock.advance(60_000); // nobody touched them: stale again, and again each handed out once
      const again = (await claim('c')).flat();
      expect(again.map((d) => d.lease.id).sort()).toEqual([...ids].sort());
      expect(new Set(again.map((d) => d.claimant)).size).toBeGreaterThan(1);
      for (const d of again) expect(d.claimant).toMatch(/^node-\d+#a$/);
      await store.close();
    });

    it('claimStalledTeardowns with a claimant prefix also takes, at once, what an earlier process of the same node stamped', async () => {
      const { store, clock } = await setup();
      const [a, b, c] = (await Promise.all(
        ['d1', 'd2', 'd3'].map((d) => store.acquire({ ...base, candidates: [d] })),
      )) as [Lease, Lease, Lease];
      await store.release(a.id, undefined, 'node-a#old');
      await store.release(b.id, undefined, 'node-ab#1'); // another node whose name starts alike
      await store.release(c.id, undefined, 'node-a#new'); // this process's own
      const restarted = await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-a#new', {
        claimantPrefix: 'node-a#',
      });
      expect(restarted).toEqual([
        { lease: await store.get(a.id), reason: 'released', claimant: 'node-a#old', stampedAt: clock.t },
      ]);
      // Now stamped by this process: taken once.
      expect(
        await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-a#new', { claimantPrefix: 'node-a#' }),
      ).toEqual([]);
      clock.advance(60_000);
      expect(
        (await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-q#1')).map((d) => d.lease.id).sort(),
      ).toEqual([a.id, b.id, c.id].sort());
      await store.close();
    });

    it('a due teardown and its lease outlive the retention of ended leases; recorded, they age out as before', async () => {
      const { store, clock } = await setup();
      const lease = (await store.acquire({ ...base, candidates: ['d1'] })) as Lease;
      await store.release(lease.id, undefined, 'node-a#1');
      clock.advance(8 * 24 * 3600 * 1000);
      await store.claimExpired(clock.t); // a pass that prunes what aged out
      expect((await store.get(lease.id))?.state).toBe('released');
      const due = await store.claimStalledTeardowns(clock.t, 60_000, 10, 'node-b#1');
      expect(due.map((d) => [d.lease.id, d.reason, d.claimant])).toEqual([
        [lease.id, 'released', 'node-a#1'],
      ]);
      await store.recordTeardown(teardownOf(lease, clock));
      expect(await store.acquire({ ...base, candidates: ['d1'] })).not.toBeNull();
      await store.close();
    });

    it('expiry: an overdue lease blocks until claimed; claimExpired hands each lease out once, oldest first, within limit', async () => {
      const { store, clock } = await setup();
      const l1 = await store.acquire({ ...base, ttlSeconds: 10, candidates: ['d1'] });
      const l2 = await store.acquire({ ...base, ttlSeconds: 5, candidates: ['d2'] });
      const l3 = await store.acquire({ ...base, ttlSeconds: 100, candidates: ['d3'] });
      clock.advance(9_999);
      expect((await store.claimExpired(clock.t)).map((l) => l.id)).toEqual([l2?.id]);
      clock.advance(1);
      expect(await store.acquire({ ...base, candidates: ['d1'] })).toBeNull();
      expect((await store.list()).map((l) => l.id).sort()).toEqual([l1?.id, l3?.id].sort());
      const claimed = await store.claimExpired(clock.t, 1);
      expect(claimed).toHaveLength(1);
      expect(claimed[0]).toMatchObject({ id: l1?.id, state: 'expired', endedAt: clock.t });
      expect(await store.claimExpired(clock.t)).toEqual([]);
      expect((await store.get(l1?.id ?? ''))?.state).toBe('expired');
      expect(await store.acquire({ ...base, candidates: ['d1'] })).toBeNull();
      await store.recordTeardown(teardownOf(l1 as Lease, clock, { reason: 'expired' }));
      expect((await store.acquire({ ...base, candidates: ['d1'] }))?.deviceId).toBe('d1');
      await store.close();
    });

    it('device state journal: records per key, the first of a key wins, taken once; other leases untouched', async () => {
      const { store } = await setup();
      const prior = { serial: 'emulator-5554', enabled_accessibility_services: null, note: 'Grüße 👋' };
      await store.saveDeviceState('lease-1', 'glass-a11y', prior);
      await store.saveDeviceState('lease-1', 'other', { a: 1 });
      await store.saveDeviceState('lease-1', 'other', { a: 2 });
      await store.saveDeviceState('lease-2', 'glass-a11y', { b: true });
      expect(await store.takeDeviceState('lease-1')).toEqual({ 'glass-a11y': prior, other: { a: 1 } });
      expect(await store.takeDeviceState('lease-1')).toEqual({});
      expect(await store.takeDeviceState('lease-2')).toEqual({ 'glass-a11y': { b: true } });
      expect(await store.takeDeviceState('never')).toEqual({});
      await store.close();
    });

    it('device state journal: some keys taken alone (once), the rest left in place for teardown', async () => {
      const { store } = await setup();
      await store.saveDeviceState('lease-1', 'glass-a11y', { serial: 's1' });
      await store.saveDeviceState('lease-1', 'app:com.example', { sha256: 'ab' });
      expect(await store.takeDeviceState('lease-1', ['glass-a11y', 'missing'])).toEqual({
        'glass-a11y': { serial: 's1' },
      });
      expect(await store.takeDeviceState('lease-1', ['glass-a11y'])).toEqual({});
      // The key taken can be journaled again (the first of a key wins only while it is there).
      await store.saveDeviceState('lease-1', 'glass-a11y', { serial: 's2' });
      expect(await store.takeDeviceState('lease-1')).toEqual({
        'glass-a11y': { serial: 's2' },
        'app:com.example': { sha256: 'ab' },
      });
      await store.close();
    });

    it('wake-up kinds: a deferred teardown wakes listeners as `deferred`, a waiter leaving as `waiters`', async () => {
      const { store, clock } = await setup();
      const kinds: string[] = [];
      const stop = await store.onWakeup((kind) => {
        kinds.push(kind);
      });
      const lease = await store.acquire({ ...base, candidates: ['dev-a'] });
      const ended = (await store.release(lease!.id))!;
      await store.enqueue('["kinds"]', 'w1', 30);
      await store.dequeue('["kinds"]', 'w1');
      for (let i = 0; i < 200 && kinds.length < 1; i++) await new Promise((r) => setTimeout(r, 5));
      await store.deferTeardown({
        lease: ended,
        reason: 'released',
        from: 'b',
        owner: 'a',
        deferredAt: clock.now(),
      });
      for (let i = 0; i < 200 && kinds.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
      await stop();
      expect(kinds).toEqual(['waiters', 'deferred']);
      await store.close();
    });

    it('deferred teardowns: kept for the owner until taken, each taken by exactly one caller', async () => {
      const { store, clock } = await setup();
      const lease = await store.acquire({ ...base, candidates: ['dev-a'] });
      const ended = (await store.release(lease!.id))!;
      const item = {
        lease: ended,
        reason: 'released' as const,
        from: 'node-b',
        owner: 'node-a',
        deferredAt: clock.now(),
      };
      expect(await store.deferredTeardowns()).toEqual({ items: [], invalid: [] });
      await store.deferTeardown(item);
      expect(await store.deferredTeardowns()).toEqual({ items: [item], invalid: [] });
      const takers = await Promise.all([1, 2, 3].map(() => store.takeDeferredTeardown(ended.id)));
      expect(takers.filter(Boolean)).toHaveLength(1);
      expect(await store.deferredTeardowns()).toEqual({ items: [], invalid: [] });
      expect(await store.takeDeferredTeardown('never')).toBe(false);
      await store.close();
    });

    it('deferred teardowns are claimed before they run: one claimant, a stale claim is re-taken', async () => {
      const { store, clock } = await setup();
      const lease = await store.acquire({ ...base, candidates: ['dev-a'] });
      const ended = (await store.release(lease!.id))!;
      const item = {
        lease: ended,
        reason: 'released' as const,
        from: 'node-b',
        owner: 'node-a',
        deferredAt: clock.now(),
      };
      expect(await store.claimDeferredTeardown(ended.id, 'node-a', 60_000)).toBe(false); // nothing deferred
      await store.deferTeardown(item);
      const claims = await Promise.all(
        ['n1', 'n2', 'n3'].map((n) => store.claimDeferredTeardown(ended.id, n, 60_000)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      // Claimed, it stays in the store (a crash of the claimant loses nothing)...
      expect((await store.deferredTeardowns()).items).toEqual([item]);
      clock.advance(59_000);
      expect(await store.claimDeferredTeardown(ended.id, 'n4', 60_000)).toBe(false);
      clock.advance(2_000); // ...and once the claim is stale another node re-takes it.
      expect(await store.claimDeferredTeardown(ended.id, 'n4', 60_000)).toBe(true);
      expect(await store.takeDeferredTeardown(ended.id)).toBe(true);
      expect(await store.claimDeferredTeardown(ended.id, 'n5', 0)).toBe(false);
      expect((await store.deferredTeardowns()).items).toEqual([]);
      await store.close();
    });

    it('list filters active leases by tenant', async () => {
      const { store } = await setup();
      const a = await store.acquire({ ...base, candidates: ['d1'] });
      const b = await store.acquire({ ...base, tenant: 't2', candidates: ['d2'] });
      await store.acquire({ ...base, candidates: ['d3'] }).then((l) => store.release(l?.id ?? ''));
      expect((await store.list({ tenant: 't1' })).map((l) => l.id)).toEqual([a?.id]);
      expect((await store.list({ tenant: 't2' })).map((l) => l.id)).toEqual([b?.id]);
      expect((await store.list()).map((l) => l.id).sort()).toEqual([a?.id, b?.id].sort());
      await store.close();
    });

    it('waiter descriptions leave with their waiter (acquired, dequeued, pruned) without listWaiters', async () => {
      const { store, clock } = await setup();
      const q = '["q"]';
      const info = { selector: {}, tenant: 't1', node: 'n1', since: clock.t };
      const count = (): Promise<number> =>
        (store as unknown as { waiterDescriptionCount(): Promise<number> }).waiterDescriptionCount();
      for (let i = 0; i < 200; i++) {
        await store.enqueue(q, `a${i}`, 30, info);
        const lease = (await store.acquire({
          ...base,
          candidates: ['d1'],
          queueKey: q,
          waiterId: `a${i}`,
        })) as Lease;
        expect(lease.deviceId).toBe('d1');
        await store.release(lease.id);
        await store.recordTeardown(teardownOf(lease, clock));
        await store.enqueue(q, `b${i}`, 30, info);
        await store.dequeue(q, `b${i}`);
        await store.enqueue(q, `c${i}`, 1, info);
        clock.advance(1_001);
        // Pruned by the head check of an acquire, or by a count of the waiting.
        if (i % 2 === 0) await store.waiting(q);
        else {
          const next = (await store.acquire({ ...base, candidates: ['d1'], queueKey: q })) as Lease;
          expect(next.deviceId).toBe('d1'); // the expired waiter no longer holds the queue
          await store.release(next.id);
          await store.recordTeardown(teardownOf(next, clock));
        }
      }
      expect(await count()).toBe(0);
      await store.close();
    });

    it('FIFO queue: only the head waiter may acquire; stale waiters drop out; re-enqueue keeps the place', async () => {
      const { store, clock } = await setup();
      const q = '["q"]';
      const req = { ...base, candidates: ['d1'], queueKey: q };
      await store.enqueue(q, 'w1', 10);
      clock.advance(1);
      await store.enqueue(q, 'w2', 30);
      await store.enqueue(q, 'w3', 30);
      expect(await store.waiting(q)).toBe(3);
      expect(await store.waiting()).toBe(3);
      expect(await store.waiting('["other"]')).toBe(0);
      expect(await store.acquire(req)).toBeNull(); // no waiter id, queue not empty
      expect(await store.acquire({ ...req, waiterId: 'w2' })).toBeNull(); // not its turn
      // Without a queue key the queue does not apply.
      expect((await store.acquire({ ...base, candidates: ['d9'] }))?.deviceId).toBe('d9');
      clock.advance(9_998);
      await store.enqueue(q, 'w1', 10); // refresh: keeps its place at the head
      clock.advance(5_000);
      const first = await store.acquire({ ...req, waiterId: 'w1' });
      expect(first?.deviceId).toBe('d1');
      expect(await store.waiting(q)).toBe(2);
      // w2 stops polling and its deadline passes: w3 is served next.
      clock.advance(20_000);
      await store.enqueue(q, 'w3', 30);
      await store.release(first?.id ?? '');
      await store.recordTeardown(teardownOf(first as Lease, clock));
      expect(await store.acquire({ ...req, waiterId: 'w2' })).toBeNull();
      expect((await store.acquire({ ...req, waiterId: 'w3' }))?.fencingToken).toBe(first!.fencingToken + 1);
      expect(await store.waiting(q)).toBe(0);
      await store.enqueue(q, 'w4', 30);
      await store.dequeue(q, 'w4');
      await store.dequeue(q, 'w4');
      expect(await store.waiting()).toBe(0);
      expect(await store.acquire({ ...req, candidates: ['d2'] })).not.toBeNull();
      await store.close();
    });

    it('listWaiters: each live waiter with its place in its queue and who waits, by tenant; gone once it left', async () => {
      const { store, clock } = await setup();
      const qa = '["pool=a"]';
      const qb = '["pool=b"]';
      const info = (tenant: string, pool: string) => ({
        selector: { labels: { pool } },
        tenant,
        node: 'node-1',
        since: clock.t,
      });
      await store.enqueue(qa, 'w1', 10, info('acme', 'a'));
      await store.enqueue(qa, 'w2', 30, info('globex', 'a'));
      await store.enqueue(qb, 'w3', 30, info('acme', 'b'));
      await store.enqueue(qa, 'w4', 30); // no description: queued, not listed
      expect(await store.listWaiters()).toEqual([
        { waiterId: 'w1', queueKey: qa, position: 1, ...info('acme', 'a') },
        { waiterId: 'w2', queueKey: qa, position: 2, ...info('globex', 'a') },
        { waiterId: 'w3', queueKey: qb, position: 1, ...info('acme', 'b') },
      ]);
      expect((await store.listWaiters({ tenant: 'globex' })).map((w) => [w.waiterId, w.position])).toEqual([
        ['w2', 2],
      ]);
      // A re-enqueue keeps the first description; w1's deadline passes: w2 moves to the head.
      await store.enqueue(qa, 'w2', 30, { ...info('globex', 'a'), node: 'elsewhere' });
      clock.advance(15_000);
      expect((await store.listWaiters()).map((w) => [w.waiterId, w.position, w.node])).toEqual([
        ['w2', 1, 'node-1'],
        ['w3', 1, 'node-1'],
      ]);
      // Acquired (leaves the queue) and dequeued waiters are no longer listed.
      expect(
        (await store.acquire({ ...base, candidates: ['d1'], queueKey: qb, waiterId: 'w3' }))?.deviceId,
      ).toBe('d1');
      await store.dequeue(qa, 'w2');
      expect(await store.listWaiters()).toEqual([]);
      await store.close();
    });

    it('wake-ups: a recorded teardown while someone is queued, a waiter that acquires and a waiter that leaves wake listeners; nothing else does', async () => {
      const { store, clock } = await setup();
      let wakes = 0;
      const arrived = async (n: number): Promise<void> => {
        // Redis delivers through a subscriber connection: wait (bounded) for the count.
        for (let i = 0; i < 200 && wakes < n; i++) await new Promise((r) => setTimeout(r, 5));
        expect(wakes).toBe(n);
      };
      const stop = await store.onWakeup(() => {
        wakes += 1;
      });
      const q = '["wake"]';
      const lease = (await store.acquire({ ...base, candidates: ['d1'] })) as Lease;
      await store.release(lease.id);
      await store.recordTeardown(teardownOf(lease, clock)); // freed, but nobody waits: no wake-up
      const queued = (await store.acquire({ ...base, candidates: ['d1'] })) as Lease;
      await store.enqueue('["other"]', 'w0', 30); // a waiter of any selector may want the device
      await store.release(queued.id);
      await arrived(0); // ended, but the device is not free before its teardown is recorded
      await store.recordTeardown(teardownOf(queued, clock));
      await arrived(1);
      await store.dequeue('["other"]', 'w0');
      await arrived(2);
      await store.enqueue(q, 'w1', 30);
      await store.enqueue(q, 'w2', 30);
      await store.acquire({ ...base, candidates: ['d1'], queueKey: q, waiterId: 'w1' });
      await arrived(3);
      await store.dequeue(q, 'w2');
      await arrived(4);
      await store.dequeue(q, 'w2'); // not queued any more: no wake-up
      await stop();
      await store.enqueue(q, 'w3', 30);
      await store.dequeue(q, 'w3');
      await new Promise((r) => setTimeout(r, 50));
      expect(wakes).toBe(4);
      await store.close();
    });

    it('wake-ups of releaseEmpty: a device freed in one step wakes listeners only while someone is queued', async () => {
      const { store, clock } = await setup();
      let wakes = 0;
      const arrived = async (n: number): Promise<void> => {
        for (let i = 0; i < 200 && wakes < n; i++) await new Promise((r) => setTimeout(r, 5));
        expect(wakes).toBe(n);
      };
      const stop = await store.onWakeup(() => {
        wakes += 1;
      });
      const first = (await store.acquire({ ...base, candidates: ['d1'] })) as Lease;
      await store.releaseEmpty(first.id, first.fencingToken, teardownOf(first, clock, { actions: [] }));
      const second = (await store.acquire({ ...base, candidates: ['d1'] })) as Lease;
      expect(second.deviceId).toBe('d1');
      await store.enqueue('["other"]', 'w0', 30);
      await store.releaseEmpty(second.id, second.fencingToken, teardownOf(second, clock, { actions: [] }));
      await arrived(1);
      // The pending path frees nothing: no wake-up until its teardown is recorded.
      const third = (await store.acquire({ ...base, candidates: ['d1'] })) as Lease;
      await store.releaseEmpty(third.id, third.fencingToken, teardownOf(third, clock, { deviceId: 'd9' }));
      await new Promise((r) => setTimeout(r, 50));
      expect(wakes).toBe(1);
      await store.recordTeardown(teardownOf(third, clock));
      await arrived(2);
      await stop();
      await store.close();
    });

    it('model: random interleavings never give two active leases on one device; tokens strictly increase', async () => {
      const devices = ['d0', 'd1', 'd2'];
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('acquire' as const),
          candidates: fc.shuffledSubarray(devices),
          ttl: fc.integer({ min: 1, max: 5 }),
        }),
        fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), wrongToken: fc.boolean() }),
        fc.record({
          kind: fc.constant('releaseEmpty' as const),
          pick: fc.nat(),
          wrongToken: fc.boolean(),
          otherDevice: fc.boolean(),
        }),
        fc.record({
          kind: fc.constant('renew' as const),
          pick: fc.nat(),
          ttl: fc.integer({ min: 1, max: 5 }),
        }),
        fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 4_000 }) }),
        fc.record({ kind: fc.constant('claim' as const), record: fc.boolean() }),
        fc.record({ kind: fc.constant('teardown' as const), pick: fc.nat() }),
        fc.record({ kind: fc.constant('stalled' as const) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
          const { store, clock } = await setup();
          // The model: per device its pointer; per lease what the store should say.
          const pointer = new Map<string, { leaseId: string }>();
          const leases = new Map<string, Lease>();
          const recorded = new Set<string>();
          const lastToken = new Map<string, number>();
          // A device is free only once its last lease's teardown is recorded (never by time).
          const free = (d: string): boolean => !pointer.has(d);
          const end = (lease: Lease, state: 'released' | 'expired'): void => {
            lease.state = state;
            lease.endedAt = clock.t;
          };
          const all = (): Lease[] => [...leases.values()];
          try {
            for (const o of ops) {
              if (o.kind === 'acquire') {
                const expected = o.candidates.find(free);
                const got = await store.acquire({ ...base, ttlSeconds: o.ttl, candidates: o.candidates });
                expect(got?.deviceId).toBe(expected);
                if (got) {
                  expect(got.fencingToken).toBeGreaterThan(lastToken.get(got.deviceId) ?? 0);
                  lastToken.set(got.deviceId, got.fencingToken);
                  pointer.set(got.deviceId, { leaseId: got.id });
                  leases.set(got.id, { ...got });
                }
              } else if (o.kind === 'release') {
                const list = all();
                const lease = list[o.pick % Math.max(1, list.length)];
                if (!lease) continue;
                if (o.wrongToken && lease.state === 'active') {
                  await expectCode(store.release(lease.id, lease.fencingToken + 1), 'CONFLICT');
                  continue;
                }
                const got = await store.release(lease.id, lease.fencingToken);
                expect(got?.id).toBe(lease.state === 'active' ? lease.id : undefined);
                if (got) end(lease, 'released');
              } else if (o.kind === 'releaseEmpty') {
                const list = all();
                const lease = list[o.pick % Math.max(1, list.length)];
                if (!lease) continue;
                const record = teardownOf(lease, clock, {
                  actions: [],
                  ...(o.otherDevice ? { deviceId: `${lease.deviceId}x` } : {}),
                });
                if (o.wrongToken && lease.state === 'active') {
                  await expectCode(store.releaseEmpty(lease.id, lease.fencingToken + 1, record), 'CONFLICT');
                  continue;
                }
                const got = await store.releaseEmpty(lease.id, lease.fencingToken, record);
                expect(got?.lease.id).toBe(lease.state === 'active' ? lease.id : undefined);
                if (!got) continue;
                end(lease, 'released');
                expect(got.teardown).toEqual(o.otherDevice ? null : record);
                if (!o.otherDevice) {
                  recorded.add(lease.id);
                  const p = pointer.get(lease.deviceId);
                  if (p?.leaseId === lease.id) pointer.delete(lease.deviceId);
                }
              } else if (o.kind === 'renew') {
                const list = all();
                const lease = list[o.pick % Math.max(1, list.length)];
                if (!lease) continue;
                if (lease.state === 'active' && lease.expiresAt > clock.t) {
                  const got = await store.renew(lease.id, lease.fencingToken, o.ttl);
                  lease.expiresAt = clock.t + o.ttl * 1000;
                  expect(got.expiresAt).toBe(lease.expiresAt);
                } else {
                  await expectCode(store.renew(lease.id, lease.fencingToken, o.ttl), 'LEASE_EXPIRED');
                }
              } else if (o.kind === 'advance') {
                clock.advance(o.ms);
              } else if (o.kind === 'claim') {
                const due = all()
                  .filter((l) => l.state === 'active' && l.expiresAt <= clock.t)
                  .map((l) => l.id)
                  .sort();
                const claimed = await store.claimExpired(clock.t);
                expect(claimed.map((l) => l.id).sort()).toEqual(due);
                for (const c of claimed) {
                  const lease = leases.get(c.id) as Lease;
                  end(lease, 'expired');
                  if (o.record) {
                    await store.recordTeardown(teardownOf(lease, clock, { reason: 'expired' }));
                    recorded.add(lease.id);
                    const p = pointer.get(lease.deviceId);
                    if (p?.leaseId === lease.id) pointer.delete(lease.deviceId);
                  }
                }
              } else if (o.kind === 'stalled') {
                // Due: every ended lease whose teardown is not recorded (stale at once with 0 ms).
                const due = all()
                  .filter((l) => l.state !== 'active' && !recorded.has(l.id))
                  .map((l) => l.id)
                  .sort();
                const got = await store.claimStalledTeardowns(clock.t, 0, 1_000, 'model#1');
                expect(got.map((d) => d.lease.id).sort()).toEqual(due);
                for (const d of got) expect(d.reason).toBe(leases.get(d.lease.id)?.state);
              } else {
                const ended = all().filter((l) => l.state !== 'active' && !recorded.has(l.id));
                const lease = ended[o.pick % Math.max(1, ended.length)];
                if (!lease) continue;
                await store.recordTeardown(teardownOf(lease, clock));
                recorded.add(lease.id);
                const p = pointer.get(lease.deviceId);
                if (p?.leaseId === lease.id) pointer.delete(lease.deviceId);
              }
              // Invariants, read back from the store.
              const active = (await store.list()).map((l) => l.deviceId);
              expect(new Set(active).size).toBe(active.length);
              expect(active.sort()).toEqual(
                all()
                  .filter((l) => l.state === 'active')
                  .map((l) => l.deviceId)
                  .sort(),
              );
            }
            for (const lease of all()) {
              const stored = await store.get(lease.id);
              expect(stored?.state).toBe(lease.state);
              expect(stored?.fencingToken).toBe(lease.fencingToken);
              if (lease.state !== 'active') {
                await expectCode(
                  store.checkFence(lease.deviceId, lease.id, lease.fencingToken),
                  'LEASE_EXPIRED',
                );
              }
            }
          } finally {
            await store.close();
          }
        }),
        { numRuns: options.modelRuns },
      );
    });
  });
}
