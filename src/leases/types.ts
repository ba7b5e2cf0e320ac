/**
 * Lease contracts. A lease gives one tenant exclusive use of one device for a TTL, with a strictly
 * increasing fencing token per device that every device operation checks. State lives behind
 * `LeaseStore` (memory by default, Redis in production) — never only in process memory.
 */
import type { LeaseSelector } from '../devices/selector.ts';

export type LeaseState = 'active' | 'released' | 'expired';

/** What a lease id looks like (route parameter, forwarding). */
export const LEASE_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export interface Lease {
  id: string;
  deviceId: string;
  tenant: string;
  /** Name of the principal that took it. */
  holder: string;
  /**
   * Strictly increasing per device across every lease ever granted on it, also across a store that
   * lost its data: a device's first token is the time in microseconds (a large integer, below 2^53),
   * each next one is one more.
   */
  fencingToken: number;
  acquiredAt: number;
  expiresAt: number;
  ttlSeconds: number;
  selector: LeaseSelector;
  state: LeaseState;
  /** Set when released or expired. */
  endedAt?: number;
  /** Apps installed during the lease stay installed at teardown (asked at acquire). */
  keepApps?: boolean;
}

export interface AcquireRequest {
  /** Devices that match the selector and are online, in preference order. */
  candidates: string[];
  tenant: string;
  holder: string;
  ttlSeconds: number;
  selector: LeaseSelector;
  /** Leave the apps installed during the lease at teardown. */
  keepApps?: boolean;
  /**
   * Fair queueing: the waiter's id in the FIFO queue `queueKey` (one per selector). When the queue
   * has waiters, only its head may acquire; a request without a waiter id may acquire only when the
   * queue is empty.
   */
  queueKey?: string;
  waiterId?: string;
  /**
   * The tenant's lease quota: when it already holds this many active leases, the store refuses in
   * the same atomic step that would grant (RATE_LIMITED, `details.quota` = 'leases'), on every node
   * at once. Checked before the queue and the candidates (also with no candidate free).
   */
  leaseQuota?: number;
}

export interface TeardownRecord {
  leaseId: string;
  deviceId: string;
  reason: 'released' | 'expired';
  startedAt: number;
  finishedAt: number;
  /** What was done, e.g. `closed helper session`, `removed forward tcp:41234 -> tcp:20345`. */
  actions: string[];
  /** What failed; non-empty means the device was quarantined. */
  failures: string[];
  /** The bridge node that ran it. */
  node: string;
}

/** An ended lease with the record of its teardown (the history of ended leases). */
export interface EndedLease {
  lease: Lease;
  teardown: TeardownRecord;
}

/** Most teardown records `listTeardowns` answers at once. */
export const MAX_TEARDOWN_LIST = 100;

/**
 * A teardown the node that ended a lease could not run because another node drives the device: it
 * waits in the store for the device's owner (now or after a takeover), which takes it exactly once.
 */
export interface DeferredTeardown {
  lease: Lease;
  reason: 'released' | 'expired';
  /** The node that ended the lease. */
  from: string;
  /** The owner it was deferred to (the device may have another owner by the time it runs). */
  owner: string;
  deferredAt: number;
  /** Set when an earlier run did not finish: the claimant of that run's stamp ('' = none). */
  resumedFrom?: string;
}

/**
 * The deferred teardowns in the store, each read on its own: `invalid` lists the records this version
 * cannot read (e.g. written by a newer node during a rolling upgrade) with what is wrong, so one bad
 * record never hides the others.
 */
export interface DeferredTeardowns {
  items: DeferredTeardown[];
  invalid: Array<{ leaseId: string; problem: string }>;
}

/**
 * An ended lease whose teardown is due (its teardown not recorded yet), as `claimStalledTeardowns`
 * hands it out. Every lease that ends enters the store's teardowns due in the step that ends it,
 * stamped with (time, claimant); `recordTeardown` removes it in the step that frees the device.
 */
export interface DueTeardown {
  lease: Lease;
  reason: 'released' | 'expired';
  /** The claimant of the stamp this claim replaced ('' = none given when the lease ended). */
  claimant: string;
  /** When that stamp was set (ms): the lease's end, or the last claim or touch. */
  stampedAt: number;
}

export interface LeaseStore {
  /** Atomically lease the first free candidate; null when none is free (or not our turn in the queue). */
  acquire(request: AcquireRequest): Promise<Lease | null>;
  get(leaseId: string): Promise<Lease | null>;
  /** The active lease on a device, if any. */
  leaseOfDevice(deviceId: string): Promise<Lease | null>;
  /** Active leases (optionally of one tenant). */
  list(filter?: { tenant?: string }): Promise<Lease[]>;
  /**
   * Extend an active lease to now + ttlSeconds. Throws BridgeError NOT_FOUND (unknown id),
   * LEASE_EXPIRED (ended), CONFLICT (fencing token does not match).
   */
  renew(leaseId: string, fencingToken: number, ttlSeconds: number): Promise<Lease>;
  /**
   * End an active lease; resolves the ended lease, or null when it was not active. Its teardown is
   * due from then on, stamped (now, `claimant`, default '').
   */
  release(leaseId: string, fencingToken?: number, claimant?: string): Promise<Lease | null>;
  /**
   * End an active lease whose teardown is known to have nothing to undo (the caller, on the node
   * that drives the device, holds nothing of it) and record `teardown` in the same step, freeing the
   * device as `recordTeardown` does (with its wake-up rule) — only when the lease's device is
   * `teardown.deviceId` and no device-state journal exists for the lease. Otherwise it ends the
   * lease as `release` does (device pending until a teardown is recorded) and answers
   * `teardown: null`: the caller runs the teardown (due, stamped (now, `claimant`) as by `release`).
   * Resolves null when the lease was not active; throws CONFLICT when the fencing token is given and
   * does not match.
   */
  releaseEmpty(
    leaseId: string,
    fencingToken: number | undefined,
    teardown: TeardownRecord,
    claimant?: string,
  ): Promise<{ lease: Lease; teardown: TeardownRecord | null } | null>;
  /** Throws unless `leaseId` is the device's active lease with exactly this fencing token. */
  checkFence(deviceId: string, leaseId: string, fencingToken: number): Promise<Lease>;
  /**
   * Mark leases whose expiresAt ≤ now as expired and return them — each lease is returned by exactly
   * one call across every process sharing the store (teardown runs exactly once). Their teardowns
   * are due from then on, stamped (now, `claimant`, default '').
   */
  claimExpired(now: number, limit?: number, claimant?: string): Promise<Lease[]>;
  /**
   * The due teardowns whose stamp is at least `staleMs` old (their run did not finish: its node
   * crashed or hung, or nobody ran it), oldest stamp first, at most `limit`, each re-stamped (now,
   * `claimant`) in the same step: each is handed to one caller across every process per stale
   * period. With `claimantPrefix`, also every due teardown whose claimant starts with it (other than
   * `claimant` itself) however recent its stamp: a process that restarts with the same node identity
   * takes over at once what its crashed predecessor was running.
   */
  claimStalledTeardowns(
    now: number,
    staleMs: number,
    limit: number,
    claimant: string,
    options?: { claimantPrefix?: string },
  ): Promise<DueTeardown[]>;
  /**
   * Refresh the stamp of a due teardown to (now, `claimant`) while it runs, so that it is not
   * claimed as stalled. True when it was due; false (nothing changed) once it is recorded.
   */
  touchTeardown(leaseId: string, now: number, claimant: string): Promise<boolean>;
  /**
   * FIFO queue per selector key. `info` describes the waiter for `listWaiters` (recorded when it
   * joins; a re-enqueue only refreshes the deadline).
   */
  enqueue(
    queueKey: string,
    waiterId: string,
    ttlSeconds: number,
    info?: WaiterInfo,
    options?: EnqueueOptions,
  ): Promise<void>;
  /** Live waiters with their place in their selector's queue (of one tenant, or all). */
  listWaiters(filter?: { tenant?: string }): Promise<Waiter[]>;
  dequeue(queueKey: string, waiterId: string): Promise<void>;
  /** Number of live waiters (for metrics). */
  waiting(queueKey?: string): Promise<number>;
  /**
   * Store what a lease's teardown did and, in the same step, take it out of the teardowns due and
   * free the device (unless the lease is still active or the device moved on to another lease).
   */
  recordTeardown(record: TeardownRecord): Promise<void>;
  /** Leave a lease's teardown for the node that drives its device (kept for the retention period). */
  deferTeardown(item: DeferredTeardown): Promise<void>;
  /** Every deferred teardown not yet taken (each record parsed on its own). */
  deferredTeardowns(): Promise<DeferredTeardowns>;
  /**
   * Claim a deferred teardown before running it: true for one caller across every process while the
   * claim is younger than `staleMs` (then another may re-claim it: its claimant crashed). The record
   * stays until `takeDeferredTeardown`, called once the teardown is recorded.
   */
  claimDeferredTeardown(leaseId: string, claimant: string, staleMs: number): Promise<boolean>;
  /** Remove one deferred teardown (and its claim): true for exactly one caller across every process. */
  takeDeferredTeardown(leaseId: string): Promise<boolean>;
  getTeardown(leaseId: string): Promise<TeardownRecord | null>;
  /**
   * The recorded teardowns of ended leases (optionally of one tenant), newest recorded first, at most
   * `limit` (capped at MAX_TEARDOWN_LIST), each with its lease; kept for the retention period.
   */
  listTeardowns(filter: { tenant?: string; limit: number }): Promise<EndedLease[]>;
  /**
   * Journal what a helper is about to change on the lease's device (e.g. the prior secure settings
   * of the glass a11y service), under `key` (a later save of the same key replaces it). Durable with
   * the store (Redis: survives a bridge crash), kept for the retention period at most.
   */
  saveDeviceState(leaseId: string, key: string, record: Record<string, unknown>): Promise<void>;
  /**
   * Everything journaled for the lease (key → record), removed from the store: teardown's input.
   * With `keys`, only those records are taken (in one step); the others stay for teardown.
   */
  takeDeviceState(
    leaseId: string,
    keys?: readonly string[],
  ): Promise<Record<string, Record<string, unknown>>>;
  /**
   * Wake-ups across processes: `listener` runs whenever, in any process sharing the store, a device
   * may have freed (a teardown recorded while some selector queue has waiters: a device nobody waits
   * for wakes nobody) or a queue's head moved (a waiter acquired or left), so
   * waiters retry at once instead of at their next poll (Redis: one pub/sub channel per prefix).
   * Resolves a function that stops listening. `kind` is `deferred` for a teardown deferred to a
   * device's owner (`deferTeardown`): only that one makes nodes look for deferred teardowns.
   */
  onWakeup(listener: (kind: WakeupKind) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** What a wake-up is about: a device or queue place for waiters, or a teardown deferred to its owner. */
export type WakeupKind = 'waiters' | 'deferred';

/** Who waits in a queue (recorded when a waiter joins it). */
/** What a client-chosen waiter id looks like (`waiter_` and 16..64 URL-safe characters). */
export const WAITER_ID_PATTERN = /^waiter_[A-Za-z0-9_-]{16,64}$/;

export interface EnqueueOptions {
  /**
   * The tenant's (`info.tenant`) waiter quota: a waiter joining while the tenant has this many live
   * waiters queued is refused in the same atomic step (RATE_LIMITED, `details.quota` = 'waiters').
   * A waiter already queued only refreshes its deadline and is never refused.
   */
  waiterQuota?: number;
}

export interface WaiterInfo {
  selector: LeaseSelector;
  tenant: string;
  /** The bridge node the waiting request is on. */
  node: string;
  /** When it joined (ms). */
  since: number;
  /** The id the client chose and resumes with (its queue member is derived from tenant and id). */
  clientWaiterId?: string;
}

/** A live waiter: its description and place (1 = head of its selector's queue). */
export interface Waiter extends WaiterInfo {
  waiterId: string;
  queueKey: string;
  position: number;
}
