/**
 * In-process lease store: the embedded default (one bridge node, no Redis). Same semantics as the
 * Redis store, operation for operation (both run the contract tests in test/integration/support):
 *
 * - A device is free when it has no lease pointer. Release and expiry keep the pointer until
 *   `recordTeardown`, so a device is never handed to the next client while its previous lease is
 *   still being torn down (or after a failed teardown quarantined it) — however long that takes: a
 *   teardown that never finished must be run again, never skipped by time.
 * - An active lease past its expiresAt still blocks its device until `claimExpired` ends it (and
 *   teardown runs); `renew` and `checkFence` refuse it as ended meanwhile.
 * - Every lease that ends is due for teardown, stamped (time, claimant), until `recordTeardown`
 *   frees its device; `claimStalledTeardowns` hands out the due teardowns whose stamp went stale
 *   (their run never finished), re-stamped; `touchTeardown` keeps a running one fresh.
 * - Fencing tokens come from a per-device counter that never resets.
 * - Ended leases and teardown records are kept for `retentionMs` (default 7 days) — an ended lease
 *   whose teardown is due is kept until it is recorded.
 */
import { LeaseFailure, leaseError, quotaError } from './errors.ts';
import {
  byAcquired,
  byQueuePlace,
  checkTtl,
  copyLease,
  DEFAULT_RETENTION_MS,
  expiresAfter,
  foreignTeardown,
  newLeaseId,
  parseDeferredTeardowns,
  parseJournalRecord,
  type StoreClockOptions,
} from './store-common.ts';
import type {
  AcquireRequest,
  DeferredTeardown,
  DeferredTeardowns,
  DueTeardown,
  EndedLease,
  EnqueueOptions,
  Lease,
  LeaseStore,
  TeardownRecord,
  Waiter,
  WaiterInfo,
  WakeupKind,
} from './types.ts';
import { MAX_TEARDOWN_LIST } from './types.ts';

function copyTeardown(record: TeardownRecord): TeardownRecord {
  return { ...record, actions: [...record.actions], failures: [...record.failures] };
}

interface DeviceSlot {
  fence: number;
  /** The active lease, or the ended one whose teardown is not recorded yet. */
  leaseId?: string;
}

export class MemoryLeaseStore implements LeaseStore {
  readonly #now: () => number;
  readonly #retentionMs: number;
  readonly #devices = new Map<string, DeviceSlot>();
  readonly #leases = new Map<string, Lease>();
  readonly #active = new Set<string>();
  /** Ended lease ids in the order they ended, for retention pruning. */
  #ended: Array<{ at: number; id: string }> = [];
  /** Teardowns due: ended lease id -> its stamp (when, by whom), until its teardown is recorded. */
  readonly #due = new Map<string, { at: number; by: string }>();
  /** queueKey -> waiterId -> deadline (Map order = arrival order). */
  readonly #queues = new Map<string, Map<string, number>>();
  /** waiterId -> who waits (for `listWaiters`); deleted wherever the waiter leaves its queue. */
  readonly #waiterInfo = new Map<string, WaiterInfo>();
  readonly #wakeups = new Set<(kind: WakeupKind) => void>();
  readonly #teardowns = new Map<string, { record: TeardownRecord; until: number }>();
  readonly #deviceState = new Map<string, { records: Map<string, string>; until: number }>();
  /** leaseId -> the deferred teardown as JSON (as the Redis store keeps it). */
  readonly #deferred = new Map<string, string>();
  /** leaseId -> who claimed its deferred teardown, and when. */
  readonly #deferredClaims = new Map<string, { at: number; by: string }>();

  constructor(options: StoreClockOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  }

  #slot(deviceId: string): DeviceSlot {
    let slot = this.#devices.get(deviceId);
    if (!slot) {
      slot = { fence: 0 };
      this.#devices.set(deviceId, slot);
    }
    return slot;
  }

  #isFree(deviceId: string): boolean {
    return this.#devices.get(deviceId)?.leaseId === undefined;
  }

  /** Drop waiters whose deadline passed; returns the live queue (or undefined when empty). */
  #liveQueue(queueKey: string, now: number): Map<string, number> | undefined {
    const queue = this.#queues.get(queueKey);
    if (!queue) return undefined;
    for (const [waiter, deadline] of queue) {
      if (deadline > now) continue;
      queue.delete(waiter);
      this.#waiterInfo.delete(waiter);
    }
    if (queue.size === 0) {
      this.#queues.delete(queueKey);
      return undefined;
    }
    return queue;
  }

  /** End an active lease: its teardown is due, stamped (now, claimant). */
  #end(lease: Lease, state: 'released' | 'expired', now: number, claimant: string): void {
    lease.state = state;
    lease.endedAt = now;
    this.#active.delete(lease.id);
    this.#ended.push({ at: now, id: lease.id });
    this.#due.set(lease.id, { at: now, by: claimant });
  }

  #prune(now: number): void {
    let i = 0;
    // A lease whose teardown is still due is kept for another retention period (as on Redis, where
    // its hash expires a retention after the teardown is recorded).
    const kept: Array<{ at: number; id: string }> = [];
    while (i < this.#ended.length && (this.#ended[i] as { at: number }).at + this.#retentionMs <= now) {
      const { id } = this.#ended[i] as { id: string };
      if (this.#due.has(id)) kept.push({ at: now, id });
      else this.#leases.delete(id);
      i++;
    }
    if (i > 0) this.#ended = [...this.#ended.slice(i), ...kept];
    for (const [id, entry] of this.#teardowns) if (entry.until <= now) this.#teardowns.delete(id);
  }

  async acquire(request: AcquireRequest): Promise<Lease | null> {
    checkTtl(request.ttlSeconds);
    const now = this.#now();
    const { queueKey, waiterId } = request;
    // Counted and granted in one synchronous step: no other acquire interleaves (as in one Lua script).
    if (request.leaseQuota !== undefined) {
      let held = 0;
      for (const id of this.#active) if (this.#leases.get(id)?.tenant === request.tenant) held += 1;
      if (held >= request.leaseQuota) throw quotaError('leases', request.tenant, held, request.leaseQuota);
    }
    if (queueKey !== undefined) {
      const queue = this.#liveQueue(queueKey, now);
      const head = queue?.keys().next().value;
      if (head !== undefined && head !== waiterId) return null;
    }
    const deviceId = request.candidates.find((id) => this.#isFree(id));
    if (deviceId === undefined) return null;
    const slot = this.#slot(deviceId);
    // A device's counter starts at the time in microseconds, then goes up by one per lease (as on
    // Redis, lua/acquire.lua): a store that starts empty continues above an earlier one's tokens.
    slot.fence = slot.fence === 0 ? Math.floor(now) * 1000 : slot.fence + 1;
    const lease: Lease = {
      id: newLeaseId(),
      deviceId,
      tenant: request.tenant,
      holder: request.holder,
      fencingToken: slot.fence,
      acquiredAt: now,
      expiresAt: expiresAfter(now, request.ttlSeconds),
      ttlSeconds: request.ttlSeconds,
      selector: structuredClone(request.selector),
      state: 'active',
      ...(request.keepApps ? { keepApps: true } : {}),
    };
    slot.leaseId = lease.id;
    this.#leases.set(lease.id, lease);
    this.#active.add(lease.id);
    if (queueKey !== undefined && waiterId !== undefined && this.#removeWaiter(queueKey, waiterId)) {
      this.#wake();
    }
    return copyLease(lease);
  }

  async get(leaseId: string): Promise<Lease | null> {
    const lease = this.#leases.get(leaseId);
    return lease ? copyLease(lease) : null;
  }

  async leaseOfDevice(deviceId: string): Promise<Lease | null> {
    const id = this.#devices.get(deviceId)?.leaseId;
    const lease = id === undefined ? undefined : this.#leases.get(id);
    return lease && lease.state === 'active' ? copyLease(lease) : null;
  }

  async list(filter: { tenant?: string } = {}): Promise<Lease[]> {
    const out: Lease[] = [];
    for (const id of this.#active) {
      const lease = this.#leases.get(id);
      if (lease && (filter.tenant === undefined || lease.tenant === filter.tenant))
        out.push(copyLease(lease));
    }
    return out.sort(byAcquired);
  }

  async renew(leaseId: string, fencingToken: number, ttlSeconds: number): Promise<Lease> {
    checkTtl(ttlSeconds);
    const now = this.#now();
    const lease = this.#leases.get(leaseId);
    if (!lease) throw leaseError(LeaseFailure.NotFound, { leaseId });
    if (lease.state !== 'active' || lease.expiresAt <= now) throw leaseError(LeaseFailure.Ended, { leaseId });
    if (lease.fencingToken !== fencingToken) throw leaseError(LeaseFailure.FenceMismatch, { leaseId });
    lease.expiresAt = expiresAfter(now, ttlSeconds);
    lease.ttlSeconds = ttlSeconds;
    return copyLease(lease);
  }

  async release(leaseId: string, fencingToken?: number, claimant = ''): Promise<Lease | null> {
    const lease = this.#leases.get(leaseId);
    if (lease?.state !== 'active') return null;
    if (fencingToken !== undefined && lease.fencingToken !== fencingToken) {
      throw leaseError(LeaseFailure.FenceMismatch, { leaseId });
    }
    this.#end(lease, 'released', this.#now(), claimant);
    return copyLease(lease);
  }

  async releaseEmpty(
    leaseId: string,
    fencingToken: number | undefined,
    teardown: TeardownRecord,
    claimant = '',
  ): Promise<{ lease: Lease; teardown: TeardownRecord | null } | null> {
    if (teardown.leaseId !== leaseId) throw foreignTeardown(leaseId, teardown.leaseId);
    const lease = this.#leases.get(leaseId);
    if (lease?.state !== 'active') return null;
    if (fencingToken !== undefined && lease.fencingToken !== fencingToken) {
      throw leaseError(LeaseFailure.FenceMismatch, { leaseId });
    }
    const now = this.#now();
    // As the Redis script: the teardown is empty only for the device the caller named and while
    // no helper journaled device state for the lease; otherwise the pending path of `release`.
    const journal = this.#deviceState.get(leaseId);
    const journaled = journal !== undefined && journal.until > now && journal.records.size > 0;
    this.#end(lease, 'released', now, claimant);
    if (lease.deviceId !== teardown.deviceId || journaled) {
      return { lease: copyLease(lease), teardown: null };
    }
    this.#record(teardown, now);
    return { lease: copyLease(lease), teardown: copyTeardown(teardown) };
  }

  async checkFence(deviceId: string, leaseId: string, fencingToken: number): Promise<Lease> {
    const now = this.#now();
    const lease = this.#leases.get(leaseId);
    if (!lease) throw leaseError(LeaseFailure.NotFound, { leaseId, deviceId });
    if (lease.deviceId !== deviceId) throw leaseError(LeaseFailure.WrongDevice, { leaseId, deviceId });
    if (
      lease.state !== 'active' ||
      lease.expiresAt <= now ||
      this.#devices.get(deviceId)?.leaseId !== leaseId
    ) {
      throw leaseError(LeaseFailure.Ended, { leaseId, deviceId });
    }
    if (lease.fencingToken !== fencingToken)
      throw leaseError(LeaseFailure.FenceMismatch, { leaseId, deviceId });
    return copyLease(lease);
  }

  async claimExpired(now: number, limit = 100, claimant = ''): Promise<Lease[]> {
    const due: Lease[] = [];
    for (const id of this.#active) {
      const lease = this.#leases.get(id);
      if (lease && lease.expiresAt <= now) due.push(lease);
    }
    due.sort((a, b) => a.expiresAt - b.expiresAt || (a.id < b.id ? -1 : 1));
    const claimed = due.slice(0, Math.max(0, limit));
    for (const lease of claimed) this.#end(lease, 'expired', now, claimant);
    this.#prune(now);
    return claimed.map(copyLease);
  }

  async claimStalledTeardowns(
    now: number,
    staleMs: number,
    limit: number,
    claimant: string,
    options: { claimantPrefix?: string } = {},
  ): Promise<DueTeardown[]> {
    const prefix = options.claimantPrefix ?? '';
    const taken: Array<{ id: string; at: number; by: string }> = [];
    for (const [id, stamp] of this.#due) {
      const stalled = stamp.at + staleMs <= now;
      const earlier = prefix !== '' && stamp.by !== claimant && stamp.by.startsWith(prefix);
      if (stalled || earlier) taken.push({ id, ...stamp });
    }
    // As the Redis script: the stalled ones oldest stamp first (then by id), then the earlier
    // process's, within the limit.
    const byStamp = (a: { id: string; at: number }, b: { id: string; at: number }): number =>
      a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const stalled = taken.filter((t) => t.at + staleMs <= now).sort(byStamp);
    const earlier = taken.filter((t) => t.at + staleMs > now).sort(byStamp);
    const out: DueTeardown[] = [];
    for (const item of [...stalled, ...earlier].slice(0, Math.max(0, Math.floor(limit)))) {
      const lease = this.#leases.get(item.id);
      if (lease === undefined || lease.state === 'active') {
        this.#due.delete(item.id);
        continue;
      }
      this.#due.set(item.id, { at: now, by: claimant });
      out.push({ lease: copyLease(lease), reason: lease.state, claimant: item.by, stampedAt: item.at });
    }
    return out;
  }

  async touchTeardown(leaseId: string, now: number, claimant: string): Promise<boolean> {
    if (!this.#due.has(leaseId)) return false;
    this.#due.set(leaseId, { at: now, by: claimant });
    return true;
  }

  async enqueue(
    queueKey: string,
    waiterId: string,
    ttlSeconds: number,
    info?: WaiterInfo,
    options: EnqueueOptions = {},
  ): Promise<void> {
    checkTtl(ttlSeconds);
    const quota = options.waiterQuota;
    if (quota !== undefined && info !== undefined && !this.#queues.get(queueKey)?.has(waiterId)) {
      // The tenant's live waiters, counted in the same synchronous step that queues this one.
      const held = this.#liveWaiters({ tenant: info.tenant }).length;
      if (held >= quota) throw quotaError('waiters', info.tenant, held, quota);
    }
    let queue = this.#queues.get(queueKey);
    if (!queue) {
      queue = new Map();
      this.#queues.set(queueKey, queue);
    }
    if (info !== undefined && !queue.has(waiterId)) this.#waiterInfo.set(waiterId, { ...info });
    // Map.set on an existing waiter keeps its place: re-enqueueing only refreshes the deadline.
    queue.set(waiterId, expiresAfter(this.#now(), ttlSeconds));
  }

  async listWaiters(filter: { tenant?: string } = {}): Promise<Waiter[]> {
    return this.#liveWaiters(filter);
  }

  /** listWaiters, synchronously (a count and the step it guards must not be split by an await). */
  #liveWaiters(filter: { tenant?: string }): Waiter[] {
    const now = this.#now();
    const waiters: Waiter[] = [];
    const live = new Set<string>();
    for (const queueKey of [...this.#queues.keys()]) {
      const queue = this.#liveQueue(queueKey, now);
      let position = 0;
      for (const waiterId of queue?.keys() ?? []) {
        position += 1;
        live.add(waiterId);
        const info = this.#waiterInfo.get(waiterId);
        if (info === undefined || (filter.tenant !== undefined && info.tenant !== filter.tenant)) continue;
        waiters.push({ ...info, selector: structuredClone(info.selector), waiterId, queueKey, position });
      }
    }
    for (const waiterId of this.#waiterInfo.keys())
      if (!live.has(waiterId)) this.#waiterInfo.delete(waiterId);
    return waiters.sort(byQueuePlace);
  }

  /** Number of stored waiter descriptions (tests: they must leave with their waiter). */
  async waiterDescriptionCount(): Promise<number> {
    return this.#waiterInfo.size;
  }

  async dequeue(queueKey: string, waiterId: string): Promise<void> {
    if (this.#removeWaiter(queueKey, waiterId)) this.#wake();
  }

  /** True when the waiter was queued. */
  #removeWaiter(queueKey: string, waiterId: string): boolean {
    const queue = this.#queues.get(queueKey);
    if (!queue) return false;
    const removed = queue.delete(waiterId);
    this.#waiterInfo.delete(waiterId);
    if (queue.size === 0) this.#queues.delete(queueKey);
    return removed;
  }

  #wake(kind: WakeupKind = 'waiters'): void {
    for (const listener of [...this.#wakeups]) listener(kind);
  }

  async onWakeup(listener: (kind: WakeupKind) => void): Promise<() => Promise<void>> {
    const own = (kind: WakeupKind): void => listener(kind);
    this.#wakeups.add(own);
    return async () => {
      this.#wakeups.delete(own);
    };
  }

  async waiting(queueKey?: string): Promise<number> {
    const now = this.#now();
    const keys = queueKey === undefined ? [...this.#queues.keys()] : [queueKey];
    let count = 0;
    for (const key of keys) count += this.#liveQueue(key, now)?.size ?? 0;
    return count;
  }

  async recordTeardown(record: TeardownRecord): Promise<void> {
    this.#record(record, this.#now());
  }

  #record(record: TeardownRecord, now: number): void {
    // Map order is the order recorded (newest last): a re-recorded teardown moves to the end.
    this.#teardowns.delete(record.leaseId);
    this.#teardowns.set(record.leaseId, {
      record: { ...record, actions: [...record.actions], failures: [...record.failures] },
      until: now + this.#retentionMs,
    });
    const slot = this.#devices.get(record.deviceId);
    const lease = this.#leases.get(record.leaseId);
    if (lease?.state === 'active') return;
    this.#due.delete(record.leaseId);
    if (slot && slot.leaseId === record.leaseId) {
      delete slot.leaseId;
      // As in Redis: a freed device wakes listeners only while some queue has waiters.
      if (this.#queues.size > 0) this.#wake();
    }
  }

  async getTeardown(leaseId: string): Promise<TeardownRecord | null> {
    const entry = this.#teardowns.get(leaseId);
    if (!entry || entry.until <= this.#now()) return null;
    return { ...entry.record, actions: [...entry.record.actions], failures: [...entry.record.failures] };
  }

  async listTeardowns(filter: { tenant?: string; limit: number }): Promise<EndedLease[]> {
    const now = this.#now();
    const limit = Math.max(0, Math.min(MAX_TEARDOWN_LIST, Math.floor(filter.limit)));
    const out: EndedLease[] = [];
    for (const [id, entry] of [...this.#teardowns].reverse()) {
      if (out.length >= limit) break;
      if (entry.until <= now) continue;
      const lease = this.#leases.get(id);
      if (!lease || (filter.tenant !== undefined && lease.tenant !== filter.tenant)) continue;
      out.push({
        lease: copyLease(lease),
        teardown: {
          ...entry.record,
          actions: [...entry.record.actions],
          failures: [...entry.record.failures],
        },
      });
    }
    return out;
  }

  async saveDeviceState(leaseId: string, key: string, record: Record<string, unknown>): Promise<void> {
    const now = this.#now();
    const entry = this.#deviceState.get(leaseId);
    const records = entry && entry.until > now ? entry.records : new Map<string, string>();
    // Stored as JSON text, as the Redis store keeps it: callers never share objects with the store.
    // The first record of a key wins (a second enable must not journal its own changes).
    if (!records.has(key)) records.set(key, JSON.stringify(record));
    this.#deviceState.set(leaseId, { records, until: now + this.#retentionMs });
  }

  async takeDeviceState(
    leaseId: string,
    keys?: readonly string[],
  ): Promise<Record<string, Record<string, unknown>>> {
    const entry = this.#deviceState.get(leaseId);
    if (keys !== undefined) {
      if (!entry || entry.until <= this.#now()) return {};
      const out: Record<string, Record<string, unknown>> = {};
      for (const key of keys) {
        const value = entry.records.get(key);
        if (value === undefined) continue;
        out[key] = parseJournalRecord(value);
        entry.records.delete(key);
      }
      return out;
    }
    this.#deviceState.delete(leaseId);
    if (!entry || entry.until <= this.#now()) return {};
    return Object.fromEntries([...entry.records].map(([k, v]) => [k, parseJournalRecord(v)]));
  }

  async deferTeardown(item: DeferredTeardown): Promise<void> {
    this.#deferred.set(item.lease.id, JSON.stringify(item));
    this.#wake('deferred');
  }

  async deferredTeardowns(): Promise<DeferredTeardowns> {
    return parseDeferredTeardowns(this.#deferred);
  }

  async claimDeferredTeardown(leaseId: string, claimant: string, staleMs: number): Promise<boolean> {
    if (!this.#deferred.has(leaseId)) return false;
    const held = this.#deferredClaims.get(leaseId);
    const now = this.#now();
    if (held !== undefined && now - held.at < staleMs) return false;
    this.#deferredClaims.set(leaseId, { at: now, by: claimant });
    return true;
  }

  async takeDeferredTeardown(leaseId: string): Promise<boolean> {
    this.#deferredClaims.delete(leaseId);
    return this.#deferred.delete(leaseId);
  }

  async close(): Promise<void> {}
}
