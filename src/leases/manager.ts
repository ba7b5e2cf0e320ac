/**
 * LeaseManager: what the lease use cases (src/app/lease-service.ts) call. Validates requests (the one
 * selector schema), resolves candidates through the
 * device registry, waits fairly (FIFO per selector) for a device to free, runs teardown on release
 * and expiry (exactly once: `claimExpired` hands each expired lease to one caller across all
 * processes), records what teardown did and quarantines the device when any step failed — before
 * the device is freed for the next client.
 *
 * Waiting: a request first tries without a queue place (it may take a device only while nobody of
 * its selector is queued), then joins the selector's FIFO queue and retries whenever the store
 * signals a wake-up (`LeaseStore.onWakeup`: a teardown freed a device or a queue's head moved, in
 * any process sharing the store — Redis pub/sub), and every `pollMs` as a slow safety net (a device
 * that came online, a lost message). The queue keeps FIFO order: every waiter wakes, only the head
 * may acquire. A waiter refreshes its queue place every waiterTtl/3, so the waiters of a crashed
 * node drop out after `waiterTtlSeconds`.
 *
 * Teardown runs on the node that drives the device. A lease ended here (released, or claimed by this
 * node's expiry pass) whose device another node owns is deferred to that owner through the store;
 * every expiry pass also takes the deferred teardowns of the devices this node owns now (its own, or
 * taken over from a dead node) and runs each exactly once. A release on the node that drives the
 * device of a lease that left nothing there (`LeaseTeardown.holdEmpty`) ends the lease and records
 * its empty teardown in one store step (`LeaseStore.releaseEmpty`: one Redis round trip).
 *
 * A teardown is never skipped: until it is recorded the lease's device stays blocked, and the lease
 * stays in the store's teardowns due, stamped with the claimant that runs it (`<node>#<process>`).
 * A running teardown refreshes its stamp every `stalledTeardownMs`/3, so a long device reset is not
 * taken from it; a stamp older than `stalledTeardownMs` means the run never finished (its node
 * crashed or hung, or its record was lost), and every expiry pass claims such teardowns
 * (`claimStalledTeardowns`: each by one node) and runs each again on the node that drives the device
 * — unless a deferred record of it waits for its owner. At start a node also takes at once what an
 * earlier process with its name was running.
 *
 * A teardown that failed because its device did not answer (`LeaseDevices.unreachable`: offline,
 * unplugged, adb down) is neither recorded nor quarantined: its journal stays, the device stays
 * blocked (its teardown due), and the teardown runs again — through the stalled-teardown pass, its
 * stamp set so that it goes stale after a backoff (1 s, doubling, at most 15 s) — until it succeeds,
 * fails on a device that answers (quarantined), or `teardownRetryMs` after the lease ended (the
 * retries ran out: quarantined).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { LeaseSelector } from '../devices/selector.ts';
import { validateSelector } from '../devices/selector.ts';
import { BridgeError, invalidArgument, isBridgeError } from '../errors.ts';
import { type Logger, silentLogger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { PeriodicTask } from '../periodic.ts';
import { queueKeyFor } from './queue-key.ts';
import {
  type DeferredTeardown,
  type EndedLease,
  type Lease,
  type LeaseStore,
  type TeardownRecord,
  WAITER_ID_PATTERN,
  type Waiter,
} from './types.ts';

/**
 * The queue member of a client-chosen waiter id: namespaced by tenant, so one tenant cannot take
 * (or dequeue) another's place by sending its id.
 */
export function internalWaiterId(tenant: string, clientId: string): string {
  return `waiter_${createHash('sha256').update(`${tenant}\0${clientId}`).digest('base64url').slice(0, 32)}`;
}

/** A second live request for one (tenant, waiter id) on this node. */
function waiterBusy(selector: LeaseSelector, waiterId: string | undefined): BridgeError {
  return new BridgeError('CONFLICT', `waiter ${waiterId} already has a live request on this node`, {
    details: { selector, waiterId, reason: 'waiter busy' },
  });
}

/** Leases claimed per expiry pass; a full pass is followed by another at once. */
const EXPIRY_BATCH = 100;
/** A claim on a deferred teardown older than this is stale (its claimant crashed): default 10 min. */
const DEFERRED_CLAIM_STALE_SECONDS = 600;
/** Attempts to defer a teardown to the owner before the device is quarantined instead. */
const DEFER_ATTEMPTS = 3;
/** The owner written into a teardown deferred while the owner lookup failed. */
const UNKNOWN_OWNER = 'unknown';
/** A deferred teardown nobody could run for this long is dropped (logged): default one day. */
const DEFERRED_MAX_AGE_SECONDS = 86_400;
/** A due teardown whose stamp is this old did not finish and is run again: default a minute. */
const STALLED_TEARDOWN_MS = 60_000;
/** How long a release waits for its teardown before it answers with the teardown pending: 5 s. */
export const RELEASE_WAIT_MS = 5_000;
/** A teardown that met an unreachable device is run again for this long after the lease ended. */
const TEARDOWN_RETRY_MS = 300_000;
/** The delay before the next run of a teardown whose device did not answer (attempt 1, 2, …). */
function teardownBackoffMs(attempt: number): number {
  return Math.min(15_000, 1000 * 2 ** Math.max(0, attempt - 1));
}

/** The node name in a teardown stamp's claimant (`<node>#<process>`); '' when there is none. */
function claimantNode(claimant: string): string {
  const hash = claimant.indexOf('#');
  return hash < 0 ? claimant : claimant.slice(0, hash);
}

/** The first action of a teardown run again because an earlier run did not finish. */
function resumedAction(claimant: string): string {
  const node = claimantNode(claimant);
  return node === ''
    ? 'teardown resumed: no earlier run of it finished'
    : `teardown resumed: the earlier run on node ${node} did not finish`;
}

export type TeardownReason = 'released' | 'expired';

export interface Candidates {
  /** Every device the selector matches (empty → NOT_FOUND). */
  matching: string[];
  /** The matching devices that are online and not quarantined, in preference order. */
  available: string[];
  /**
   * Devices the selector matched a moment ago whose records the store no longer has (it lost its
   * data; their owner puts them back): with none matching, the answer is to wait, not NOT_FOUND.
   */
  missing?: string[];
  /** None match, and the store lost its data a moment ago: records may come back (wait, not NOT_FOUND). */
  restoring?: boolean;
}

/** What the manager needs of the device registry. */
export interface LeaseDevices {
  /** The devices a (validated) selector matches. */
  match(selector: LeaseSelector): Promise<Candidates>;
  /** Take a device out of service; called before the device is freed when its teardown failed. */
  quarantine?(deviceId: string, reason: string): Promise<unknown>;
  /** The node that drives the device, null when it has no record (teardown then runs where it ended). */
  ownerOf?(deviceId: string): Promise<string | null>;
  /**
   * Whether a teardown that failed with these failures failed because the device did not answer
   * (it is then run again once the device is back, not quarantined). Without it, every failure
   * quarantines.
   */
  unreachable?(deviceId: string, failures: readonly string[]): Promise<boolean>;
}

/** What undoes a lease on its device (this node's lease operations). */
export interface LeaseTeardown {
  /** Undo what the lease did on the device; report each action and each failure. */
  closeLease(lease: Lease, reason: TeardownReason): Promise<{ actions: string[]; failures: string[] }>;
  /**
   * For the one-step release (optional): when nothing of the lease is on this node, so that its
   * teardown here would undo nothing, hold the lease as closing — its new operations wait — and
   * return the function that ends the hold: `ended` true refuses them (LEASE_EXPIRED), false lets
   * them run. null when something of the lease is here (its teardown runs as usual).
   */
  holdEmpty?(leaseId: string): ((ended: boolean) => void) | null;
}

export interface LeaseManagerOptions {
  store: LeaseStore;
  devices: LeaseDevices;
  teardown: LeaseTeardown;
  /** This bridge node's name, written into teardown records. */
  node: string;
  defaultTtlSeconds?: number;
  maxTtlSeconds?: number;
  maxWaitSeconds?: number;
  /** How often a waiter retries without a wake-up (the safety net; default 1000). */
  pollMs?: number;
  expiryIntervalMs?: number;
  /** How long a waiter stays queued without refreshing (a crashed node's waiters drop out). */
  waiterTtlSeconds?: number;
  /** A deferred teardown older than this is dropped with an error log instead of run (default a day). */
  deferredMaxAgeSeconds?: number;
  /** A claimed deferred teardown not recorded within this long is re-claimed (default 10 minutes). */
  deferredClaimStaleSeconds?: number;
  /**
   * A due teardown whose stamp is this old (ms) did not finish and is run again (default 60 s); a
   * running teardown refreshes its stamp every third of it.
   */
  stalledTeardownMs?: number;
  /**
   * How long `release` waits for the teardown (default 5 s); past it the release answers with the
   * teardown pending, and the teardown runs on and is recorded when it ends.
   */
  releaseWaitMs?: number;
  /**
   * How long after a lease ended its teardown is run again while its device does not answer
   * (default 5 minutes); then the device is quarantined.
   */
  teardownRetryMs?: number;
  logger?: Logger;
  /** Lease metrics (acquisitions, wait time, expiries, teardown outcomes). */
  metrics?: Pick<
    Metrics,
    'leaseAcquisitions' | 'leaseWaitSeconds' | 'leaseExpiries' | 'leaseTeardowns' | 'leaseWaiterGrants'
  >;
  now?: () => number;
}

export interface AcquireOptions {
  selector: unknown;
  ttlSeconds?: number;
  waitSeconds?: number;
  tenant: string;
  holder: string;
  /** Leave the apps installed during the lease at teardown. */
  keepApps?: boolean;
  /** Aborted when the client goes away: the waiter leaves the queue. */
  signal?: AbortSignal;
  /**
   * The client's own waiter id (the re-poll protocol): a wait that ends without a device keeps this
   * place in the queue for `waiterTtlSeconds`, so the client's next request with the same id resumes
   * it (short requests survive load-balancer idle timeouts; the id finds the place in GET /v1/waiters).
   */
  waiterId?: string;
  /**
   * What the tenant may hold at once: past `leases` active leases a grant is refused, past `waiters`
   * queued waiters joining the queue is refused (429 RATE_LIMITED naming the quota). The store counts
   * and grants (or queues) in one atomic step, so requests racing on several nodes cannot pass it
   * together. Absent: no quota.
   */
  quota?: { leases: number; waiters: number };
}

export interface ReleaseResult {
  lease: Lease;
  /** The recorded teardown; null while it still runs (`teardownPending`). */
  teardown: TeardownRecord | null;
  /** The release answered before its teardown ended: it waited this long; the record comes later. */
  teardownPending?: { waitedMs: number };
}

function intInRange(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(`${field} must be an integer from ${min} to ${max}`, [
      { path: field, message: `must be an integer from ${min} to ${max}` },
    ]);
  }
  return value;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

export class LeaseManager {
  readonly #store: LeaseStore;
  readonly #devices: LeaseDevices;
  readonly #teardown: LeaseTeardown;
  readonly #node: string;
  readonly #defaultTtl: number;
  readonly #maxTtl: number;
  readonly #maxWait: number;
  readonly #pollMs: number;
  readonly #expiryIntervalMs: number;
  readonly #waiterTtl: number;
  readonly #deferredMaxAgeMs: number;
  readonly #deferredClaimStaleMs: number;
  readonly #stalledTeardownMs: number;
  readonly #releaseWaitMs: number;
  readonly #teardownRetryMs: number;
  /**
   * Leases whose teardown met an unreachable device here: how many runs it took so far, and until
   * when to remember it (another node may record it: the entry is then dropped by time).
   */
  readonly #unanswered = new Map<string, { attempts: number; until: number }>();
  /** This process's stamp on the teardowns it runs: `<node>#<random>`, new in every process. */
  readonly #claimant: string;
  /** Leases whose teardown runs in this process now. */
  readonly #tearingDown = new Set<string>();
  /** Set by `start()`: the next stalled-teardown pass also takes an earlier process's (same node). */
  #takeEarlierRuns = false;
  readonly #log: Logger;
  readonly #metrics: LeaseManagerOptions['metrics'];
  readonly #now: () => number;
  /**
   * This process's queued waiters in the order they queued (a Map keeps insertion order): a wake-up
   * wakes only the first of each queue — the only one here that can be its queue's head — so a
   * release costs one attempt per node and queue, not one per waiter. `wake` is set while it
   * sleeps; `pending` records a wake-up that came while it was busy (its next sleep returns at once).
   */
  readonly #waiters = new Map<string, { queueKey: string; wake?: () => void; pending: boolean }>();
  readonly #inflight = new Set<Promise<unknown>>();
  /** The expiry loop: a full pass (100 claimed) runs again at once. */
  readonly #expiry: PeriodicTask;
  /** Set by `drain()`: new leases are refused, waiters give up. */
  #draining = false;
  /** Stops listening for the store's wake-ups (set while started). */
  #unsubscribe: Promise<() => Promise<void>> | undefined;
  /** The deferred-teardown pass a wake-up started, while it runs; `#deferredAgain`: run it once more. */
  #deferredKick: Promise<void> | undefined;
  #deferredAgain = false;
  /** Set by `stop()` (cleared by `start()`): no new deferred-teardown pass starts. */
  #stopping = false;

  constructor(options: LeaseManagerOptions) {
    this.#store = options.store;
    this.#devices = options.devices;
    this.#teardown = options.teardown;
    this.#node = options.node;
    this.#defaultTtl = options.defaultTtlSeconds ?? 300;
    this.#maxTtl = options.maxTtlSeconds ?? 3600;
    this.#maxWait = options.maxWaitSeconds ?? 300;
    this.#pollMs = options.pollMs ?? 1000;
    this.#expiryIntervalMs = options.expiryIntervalMs ?? 500;
    this.#waiterTtl = options.waiterTtlSeconds ?? 5;
    this.#deferredMaxAgeMs = (options.deferredMaxAgeSeconds ?? DEFERRED_MAX_AGE_SECONDS) * 1000;
    this.#deferredClaimStaleMs = (options.deferredClaimStaleSeconds ?? DEFERRED_CLAIM_STALE_SECONDS) * 1000;
    this.#stalledTeardownMs = options.stalledTeardownMs ?? STALLED_TEARDOWN_MS;
    this.#releaseWaitMs = options.releaseWaitMs ?? RELEASE_WAIT_MS;
    this.#teardownRetryMs = options.teardownRetryMs ?? TEARDOWN_RETRY_MS;
    this.#claimant = `${this.#node}#${randomBytes(6).toString('base64url')}`;
    this.#log = options.logger ?? silentLogger();
    this.#metrics = options.metrics;
    this.#now = options.now ?? Date.now;
    // Three steps, each on its own: a failing deferred- or stalled-teardown pass never stops lease
    // expiry.
    this.#expiry = new PeriodicTask(this.#expiryIntervalMs, async () => {
      try {
        await this.runDeferredOnce();
      } catch (err) {
        this.#log.error({ err }, 'lease: deferred teardown pass failed');
      }
      try {
        await this.resumeStalledOnce();
      } catch (err) {
        this.#log.error({ err }, 'lease: stalled teardown pass failed');
      }
      try {
        return (await this.expireOnce()) >= EXPIRY_BATCH;
      } catch (err) {
        this.#log.error({ err }, 'lease: expiry pass failed');
        return false;
      }
    });
  }

  get store(): LeaseStore {
    return this.#store;
  }

  /**
   * Lease a device matching the selector. NOT_FOUND (details.selector) when nothing matches at all;
   * CONFLICT (retryable) when nothing freed within waitSeconds; UNAVAILABLE (retryable) without
   * waitSeconds when only devices whose records the store lost match (with it, it waits for them);
   * INVALID_ARGUMENT for bad input.
   */
  async acquire(options: AcquireOptions): Promise<Lease> {
    const started = performance.now();
    try {
      const lease = await this.#acquire(options);
      this.#metrics?.leaseAcquisitions.inc({ outcome: 'granted' });
      this.#metrics?.leaseWaitSeconds.observe((performance.now() - started) / 1000);
      return lease;
    } catch (err) {
      const code = err instanceof BridgeError ? err.code : undefined;
      const outcome = code === 'CONFLICT' ? 'conflict' : code === 'UNAVAILABLE' ? 'refused' : undefined;
      if (outcome) this.#metrics?.leaseAcquisitions.inc({ outcome });
      throw err;
    }
  }

  async #acquire(options: AcquireOptions): Promise<Lease> {
    const selector = validateSelector(options.selector);
    const ttlSeconds = intInRange(options.ttlSeconds ?? this.#defaultTtl, 'ttlSeconds', 1, this.#maxTtl);
    const waitSeconds = intInRange(options.waitSeconds ?? 0, 'waitSeconds', 0, this.#maxWait);
    const { signal } = options;
    if (signal?.aborted) throw abortError(signal);
    if (this.#draining) throw this.#drainingError();

    const first = await this.#devices.match(selector);
    if (first.matching.length === 0) {
      const missing = first.missing ?? [];
      if (missing.length === 0 && first.restoring !== true) {
        throw new BridgeError('NOT_FOUND', 'no device matches the selector', { details: { selector } });
      }
      // The store lost their records (Redis came back empty): they are put back shortly.
      if (waitSeconds === 0 && options.waiterId === undefined) {
        throw new BridgeError(
          'UNAVAILABLE',
          'the device records are being restored (the lease store lost its data): retry shortly',
          {
            retryable: true,
            details: { selector, ...(missing.length > 0 ? { deviceIds: missing.slice(0, 20) } : {}) },
          },
        );
      }
    }
    const queueKey = queueKeyFor(selector);
    const base = {
      tenant: options.tenant,
      holder: options.holder,
      ttlSeconds,
      selector,
      queueKey,
      ...(options.keepApps ? { keepApps: true } : {}),
      // Checked by the store in the step that grants (atomic across nodes).
      ...(options.quota === undefined ? {} : { leaseQuota: options.quota.leases }),
    };
    const waiterQuota = options.quota === undefined ? {} : { waiterQuota: options.quota.waiters };
    const resumed = options.waiterId;
    if (resumed !== undefined && !WAITER_ID_PATTERN.test(resumed)) {
      throw invalidArgument('waiterId must be waiter_ and 16 to 64 characters [A-Za-z0-9_-]', [
        { path: 'waiterId', message: 'must match waiter_[A-Za-z0-9_-]{16,64}' },
      ]);
    }
    // A client's id is its tenant's: the queue member is derived from (tenant, id), so another tenant
    // sending the same id (it shows in 409 details and GET /v1/waiters) is a different waiter.
    const internal = resumed === undefined ? undefined : internalWaiterId(options.tenant, resumed);
    if (internal !== undefined && this.#waiters.has(internal)) {
      throw waiterBusy(selector, resumed);
    }
    const now = await this.#store.acquire({
      ...base,
      candidates: first.available,
      ...(internal === undefined ? {} : { waiterId: internal }),
    });
    if (now) return this.#handOver(now, signal);
    if (waitSeconds === 0 && resumed === undefined) throw this.#conflict(selector, 0);
    if (internal !== undefined && this.#waiters.has(internal)) {
      throw waiterBusy(selector, resumed);
    }

    const waiterId = internal ?? `waiter_${randomBytes(12).toString('base64url')}`;
    const deadline = performance.now() + waitSeconds * 1000;
    const waiterTtl = Math.max(this.#waiterTtl, (this.#pollMs * 3) / 1000);
    const info = {
      selector,
      tenant: options.tenant,
      node: this.#node,
      since: Date.now(),
      ...(resumed === undefined ? {} : { clientWaiterId: resumed }),
    };
    // Pending from the start: a device freed between the first attempt and joining the queue woke
    // nobody (a teardown publishes only while someone is queued), so the first retry comes at once.
    // Registered before the enqueue so a second request with the same (tenant, id) sees it at once.
    const self = { queueKey, pending: true } as { queueKey: string; wake?: () => void; pending: boolean };
    this.#waiters.set(waiterId, self);
    try {
      await this.#store.enqueue(queueKey, waiterId, waiterTtl, info, waiterQuota);
    } catch (err) {
      this.#waiters.delete(waiterId);
      throw err;
    }
    let refreshedAt = performance.now();
    let keepPlace = false;
    let joined = true;
    try {
      for (;;) {
        const left = deadline - performance.now();
        if (left <= 0) {
          // A client waiter keeps its place for its next request (unless this node is draining).
          keepPlace = resumed !== undefined;
          throw this.#conflict(selector, waitSeconds, keepPlace ? resumed : undefined);
        }
        const woken = await this.#sleep(self, Math.min(this.#pollMs, left), signal);
        const after = joined ? 'joined' : woken ? 'wake-up' : 'poll';
        joined = false;
        if (signal?.aborted) throw abortError(signal);
        if (this.#draining) throw this.#drainingError();
        if (performance.now() - refreshedAt > (waiterTtl * 1000) / 3) {
          await this.#store.enqueue(queueKey, waiterId, waiterTtl, info, waiterQuota);
          refreshedAt = performance.now();
        }
        const { available } = await this.#devices.match(selector);
        const lease = await this.#store.acquire({ ...base, candidates: available, waiterId });
        if (lease) {
          this.#metrics?.leaseWaiterGrants.inc({ after });
          return this.#handOver(lease, signal);
        }
      }
    } finally {
      this.#waiters.delete(waiterId);
      if (self.pending) this.#wakeWaiters(); // a wake-up this waiter did not use goes to the next
      // Acquire removed us on success; on every other way out leave the queue (idempotent), except a
      // client waiter whose wait ran out: its place stays until its queue deadline passes.
      if (!keepPlace) {
        await this.#store.dequeue(queueKey, waiterId).catch((err: unknown) => {
          this.#log.warn({ err, queueKey }, 'lease: dequeue failed');
        });
      }
    }
  }

  /** Nobody will receive a lease acquired after the client left: end it (with teardown). */
  async #handOver(lease: Lease, signal: AbortSignal | undefined): Promise<Lease> {
    if (signal?.aborted) {
      await this.release(lease.id, lease.fencingToken, lease).catch(() => undefined);
      throw abortError(signal);
    }
    this.#log.info({ leaseId: lease.id, deviceId: lease.deviceId, tenant: lease.tenant }, 'lease: acquired');
    return lease;
  }

  #drainingError(): BridgeError {
    return new BridgeError(
      'UNAVAILABLE',
      'this bridge node is shutting down (draining): retry on another node',
      {
        retryable: true,
        details: { node: this.#node, draining: true },
      },
    );
  }

  /**
   * Shutdown, first step: refuse new leases (UNAVAILABLE, retryable) and end every wait at once with
   * the same error, so clients retry on another node. Leases already granted stay valid.
   */
  drain(): void {
    this.#draining = true;
    this.#wakeWaiters(true);
  }

  get draining(): boolean {
    return this.#draining;
  }

  #conflict(selector: LeaseSelector, waitSeconds: number, waiterId?: string): BridgeError {
    const hint =
      waitSeconds === 0
        ? ': every matching device is leased; wait for one with waitSeconds (CLI: lease acquire --wait S)'
        : '';
    return new BridgeError('CONFLICT', `no device free within ${waitSeconds}s${hint}`, {
      retryable: true,
      details: { selector, waitSeconds, ...(waiterId === undefined ? {} : { waiterId }) },
    });
  }

  /** True when woken (a wake-up now, one that came while busy, or the abort); false when `ms` ran out. */
  #sleep(
    waiter: { wake?: () => void; pending: boolean },
    ms: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    if (waiter.pending) {
      waiter.pending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const end = (woken: boolean): void => {
        clearTimeout(timer);
        delete waiter.wake;
        signal?.removeEventListener('abort', done);
        resolve(woken);
      };
      const done = (): void => end(true);
      const timer = setTimeout(() => end(false), ms);
      waiter.wake = done;
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Wake the first local waiter of each queue (every waiter with `all`, e.g. when draining). */
  #wakeWaiters(all = false): void {
    if (this.#waiters.size === 0) return; // every release and teardown comes here
    const woken = new Set<string>();
    for (const waiter of [...this.#waiters.values()]) {
      if (!all && woken.has(waiter.queueKey)) continue;
      woken.add(waiter.queueKey);
      if (waiter.wake) waiter.wake();
      else waiter.pending = true;
    }
  }

  get(leaseId: string): Promise<Lease | null> {
    return this.#store.get(leaseId);
  }

  list(filter: { tenant?: string } = {}): Promise<Lease[]> {
    return this.#store.list(filter);
  }

  async renew(leaseId: string, fencingToken: number, ttlSeconds?: number): Promise<Lease> {
    const ttl = intInRange(ttlSeconds ?? this.#defaultTtl, 'ttlSeconds', 1, this.#maxTtl);
    return this.#store.renew(leaseId, fencingToken, ttl);
  }

  /**
   * End a lease and tear it down. NOT_FOUND for an unknown id, LEASE_EXPIRED when it already ended,
   * CONFLICT when the fencing token is given and does not match. `known`: the device the caller read
   * the lease on (the application layer has it), which allows the one-step release (#releaseEmpty).
   */
  async release(
    leaseId: string,
    fencingToken?: number,
    known?: { deviceId: string },
  ): Promise<ReleaseResult> {
    const startedAt = performance.now();
    const fused =
      known === undefined ? undefined : await this.#releaseEmpty(leaseId, fencingToken, known, startedAt);
    if (fused !== undefined) return fused;
    const lease = await this.#store.release(leaseId, fencingToken, this.#claimant);
    if (!lease) throw await this.#notActive(leaseId);
    this.#log.info({ leaseId, deviceId: lease.deviceId }, 'lease: released');
    return { lease, ...(await this.#awaitTeardown(lease, startedAt)) };
  }

  /**
   * Start the released lease's teardown and wait for it until `releaseWaitMs` after the release
   * began; past that the answer says it is pending. The teardown runs on either way (tracked: `stop()`
   * waits for it) and records itself; the device stays blocked until it has.
   */
  async #awaitTeardown(
    lease: Lease,
    startedAt: number,
  ): Promise<Pick<ReleaseResult, 'teardown' | 'teardownPending'>> {
    const running = this.#track(this.#tearDown(lease, 'released'));
    let timer: NodeJS.Timeout | undefined;
    const waitMs = Math.max(0, this.#releaseWaitMs - (performance.now() - startedAt));
    const timedOut = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), waitMs);
    });
    try {
      const teardown = await Promise.race([running, timedOut]);
      if (teardown !== null) return { teardown };
    } finally {
      clearTimeout(timer);
    }
    this.#log.warn(
      { leaseId: lease.id, deviceId: lease.deviceId, waitedMs: this.#releaseWaitMs },
      'lease: released; its teardown still runs (recorded when it ends)',
    );
    running.catch((err: unknown) =>
      this.#log.error({ err, leaseId: lease.id }, 'lease: a teardown left running by its release failed'),
    );
    return { teardown: null, teardownPending: { waitedMs: this.#releaseWaitMs } };
  }

  /** Why a lease could not be released: NOT_FOUND, or LEASE_EXPIRED naming its state. */
  async #notActive(leaseId: string): Promise<BridgeError> {
    const known = await this.#store.get(leaseId);
    if (!known) return new BridgeError('NOT_FOUND', 'lease not found', { details: { leaseId } });
    return new BridgeError('LEASE_EXPIRED', `lease already ${known.state}`, {
      details: { leaseId, state: known.state },
    });
  }

  /**
   * The one-step release: on the node that drives the device (or when nobody does), while nothing of
   * the lease is here (`LeaseTeardown.holdEmpty`), the store ends the lease and records its empty
   * teardown at once (`releaseEmpty`: one Redis round trip instead of release + record-teardown).
   * The store checks the device and the device-state journal; when they say otherwise, the lease
   * ended pending and its teardown runs as usual. Resolves undefined when the path does not apply
   * (nothing done: the caller releases as usual). `known` is the device the caller read the lease on.
   */
  async #releaseEmpty(
    leaseId: string,
    fencingToken: number | undefined,
    known: { deviceId: string },
    startedAt: number,
  ): Promise<ReleaseResult | undefined> {
    if (this.#teardown.holdEmpty === undefined) return undefined;
    const { deviceId } = known;
    // The hold first (something of the lease here: no owner read, the usual path), then the owner,
    // read while no operation of the lease can start here.
    const settle = this.#teardown.holdEmpty(leaseId);
    if (settle === null) return undefined;
    try {
      const owner = this.#devices.ownerOf === undefined ? null : await this.#devices.ownerOf(deviceId);
      if (owner !== null && owner !== this.#node) {
        settle(false);
        return undefined;
      }
    } catch {
      settle(false);
      return undefined; // the usual path looks it up again, and defers when it still fails
    }
    let ended = false;
    let result: Awaited<ReturnType<LeaseStore['releaseEmpty']>>;
    try {
      const at = this.#now();
      const record = this.#record({ id: leaseId, deviceId }, 'released', at, [], [], at);
      result = await this.#store.releaseEmpty(leaseId, fencingToken, record, this.#claimant);
      // Not active (unknown or ended): its operations here are refused either way.
      ended = true;
    } catch (err) {
      // A CONFLICT (wrong token) left the lease as it was; any other failure may have come after the
      // script ran (a lost reply): ask the store, and when it cannot say, count the lease as ended
      // (the waiting operations are refused; the client retries its release and its calls).
      if (!isBridgeError(err) || err.code !== 'CONFLICT') {
        const now = await this.#store.get(leaseId).catch(() => null);
        ended = now === null || now.state !== 'active';
      }
      throw err;
    } finally {
      settle(ended);
    }
    if (result === null) throw await this.#notActive(leaseId);
    const { lease, teardown } = result;
    this.#log.info({ leaseId, deviceId: lease.deviceId }, 'lease: released');
    if (teardown === null) return { lease, ...(await this.#awaitTeardown(lease, startedAt)) };
    this.#metrics?.leaseTeardowns.inc({ outcome: 'ok' });
    this.#log.info(
      { leaseId, deviceId: lease.deviceId, reason: 'released', failures: 0, empty: true },
      'lease: teardown done',
    );
    this.#wakeWaiters();
    return { lease, teardown };
  }

  /** The recorded teardown of an ended lease (null until it ran). */
  teardownOf(leaseId: string): Promise<TeardownRecord | null> {
    return this.#store.getTeardown(leaseId);
  }

  /** Recorded teardowns of ended leases (optionally of one tenant), newest first. */
  listTeardowns(filter: { tenant?: string; limit: number }): Promise<EndedLease[]> {
    return this.#store.listTeardowns(filter);
  }

  checkFence(deviceId: string, leaseId: string, fencingToken: number): Promise<Lease> {
    return this.#store.checkFence(deviceId, leaseId, fencingToken);
  }

  async activeCount(): Promise<number> {
    return (await this.#store.list()).length;
  }

  /** Live waiters (of one tenant, or all) with their place in their selector's queue. */
  async listWaiters(filter: { tenant?: string } = {}): Promise<Waiter[]> {
    // Each waiter is shown with the id its client resumes with (not the tenant-derived queue member).
    return (await this.#store.listWaiters(filter)).map(({ clientWaiterId, ...waiter }) =>
      clientWaiterId === undefined ? waiter : { ...waiter, waiterId: clientWaiterId },
    );
  }

  waitingCount(): Promise<number> {
    return this.#store.waiting();
  }

  /** Start the expiry loop and listen for wake-ups (idempotent). */
  start(): void {
    this.#stopping = false;
    this.#takeEarlierRuns = true;
    this.#expiry.start();
    this.#unsubscribe ??= this.#store
      .onWakeup((kind) => {
        // Only a deferral can leave a teardown for this node: other wake-ups cost no store reads.
        if (kind === 'deferred') this.#kickDeferred();
        else this.#wakeWaiters();
      })
      .catch((err: unknown) => {
        this.#log.warn({ err }, 'lease: no wake-ups, waiters poll');
        return async () => undefined;
      });
  }

  /**
   * Run the deferred-teardown pass now (a wake-up: a lease ended on another node may have left its
   * teardown for this one), so the owner undoes the lease — closes its adb endpoints and streams —
   * at once instead of at its next periodic pass. Passes never overlap; wake-ups during one run it
   * once more after it.
   */
  #kickDeferred(): void {
    if (this.#stopping) return;
    if (this.#deferredKick !== undefined) {
      this.#deferredAgain = true;
      return;
    }
    this.#deferredKick = this.#track(
      (async () => {
        do {
          this.#deferredAgain = false;
          try {
            await this.runDeferredOnce();
          } catch (err) {
            this.#log.warn({ err }, 'lease: deferred teardown pass on wake-up failed');
          }
        } while (this.#deferredAgain && !this.#stopping);
      })(),
    ).finally(() => {
      this.#deferredKick = undefined;
    });
  }

  /**
   * Stop the expiry loop and the wake-ups, and wait for running teardowns — also those a pass still
   * running starts while this waits (it claimed them: they must finish before the node goes away).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#expiry.stop();
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = undefined;
    await (await unsubscribe)?.();
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  /** One expiry pass: claim expired leases (up to 100) and tear each down. Resolves how many. */
  async expireOnce(): Promise<number> {
    const claimed = await this.#store.claimExpired(this.#now(), EXPIRY_BATCH, this.#claimant);
    await Promise.all(
      claimed.map((lease) => {
        this.#log.info({ leaseId: lease.id, deviceId: lease.deviceId }, 'lease: expired');
        this.#metrics?.leaseExpiries.inc();
        return this.#track(this.#tearDown(lease, 'expired'));
      }),
    );
    return claimed.length;
  }

  /**
   * Run again the teardowns that did not finish: claim the due teardowns whose stamp is older than
   * `stalledTeardownMs` (each handed to one node; after `start()`, also at once those an earlier
   * process of this node stamped: it crashed) and hand each to the same path as a fresh teardown —
   * run here when this node drives the device (or nobody does), else deferred to the owner. One whose
   * deferred record waits for its owner is left to that (never deferred twice), one running in this
   * process is left to its run. Each runs in the background (tracked: `stop()` waits for it), so the
   * pass never waits for one. Resolves how many were started.
   */
  async resumeStalledOnce(): Promise<number> {
    if (this.#stopping) return 0;
    const earlier = this.#takeEarlierRuns;
    const due = await this.#store.claimStalledTeardowns(
      this.#now(),
      this.#stalledTeardownMs,
      EXPIRY_BATCH,
      this.#claimant,
      earlier ? { claimantPrefix: `${this.#node}#` } : {},
    );
    if (earlier) this.#takeEarlierRuns = false;
    let waiting: Set<string> | undefined;
    let started = 0;
    for (const { lease, reason, claimant } of due) {
      if (this.#tearingDown.has(lease.id)) continue;
      if (waiting === undefined) {
        const deferred = await this.#store.deferredTeardowns();
        waiting = new Set([
          ...deferred.items.map((item) => item.lease.id),
          ...deferred.invalid.map((item) => item.leaseId),
        ]);
      }
      if (waiting.has(lease.id)) continue;
      this.#log.warn(
        { leaseId: lease.id, deviceId: lease.deviceId, reason, earlier: claimant },
        'lease: running again a teardown that did not finish',
      );
      void this.#track(this.#tearDown(lease, reason, claimant));
      started++;
    }
    return started;
  }

  /**
   * Start the teardowns deferred to this node: those whose device this node owns now (or whose device
   * record is gone: nothing can be undone anywhere, the record frees it). Each is taken once and runs
   * in the background (tracked: `stop()` waits for it), so the expiry pass never waits for one.
   * Records this version cannot read, and records older than the age cap, are logged and removed.
   * Resolves how many were started.
   */
  async runDeferredOnce(): Promise<number> {
    const owner = this.#devices.ownerOf;
    if (owner === undefined || this.#stopping) return 0;
    const { items, invalid } = await this.#store.deferredTeardowns();
    for (const { leaseId, problem } of invalid) {
      if (await this.#store.takeDeferredTeardown(leaseId)) {
        this.#log.error({ leaseId, problem }, 'lease: removed a deferred teardown that cannot be read');
      }
    }
    let ran = 0;
    for (const item of items) {
      const { id: leaseId, deviceId } = item.lease;
      if (this.#now() - item.deferredAt > this.#deferredMaxAgeMs) {
        if (await this.#store.takeDeferredTeardown(leaseId)) {
          this.#log.error(
            { leaseId, deviceId, from: item.from, deferredAt: item.deferredAt },
            'lease: dropped a deferred teardown nobody ran within the age cap',
          );
        }
        continue;
      }
      let now: string | null;
      try {
        now = await owner.call(this.#devices, deviceId);
      } catch (err) {
        this.#log.warn(
          { err, leaseId, deviceId },
          'lease: owner lookup failed; deferred teardown left for later',
        );
        continue;
      }
      if (now !== null && now !== this.#node) continue;
      if (!(await this.#store.claimDeferredTeardown(leaseId, this.#node, this.#deferredClaimStaleMs)))
        continue;
      this.#log.info(
        { leaseId, deviceId, from: item.from },
        'lease: running a teardown deferred to this node',
      );
      void this.#track(this.#runClaimed(item));
      ran++;
    }
    return ran;
  }

  /**
   * Run a claimed deferred teardown; remove it from the store only once its teardown is recorded
   * (otherwise the claim goes stale and a later pass, here or on a new owner, runs it again).
   */
  async #runClaimed(item: DeferredTeardown): Promise<void> {
    const { id: leaseId } = item.lease;
    // The lease's stamp is the deferring node's: take it at once (the run is this node's now).
    await this.#runTeardown(item.lease, item.reason, { resumedFrom: item.resumedFrom, stampFirst: true });
    try {
      // A run that waits for its device is this node's now: the stalled-teardown pass runs it again.
      if (!this.#unanswered.has(leaseId) && (await this.#store.getTeardown(leaseId)) === null) return;
      await this.#store.takeDeferredTeardown(leaseId);
    } catch (err) {
      this.#log.warn({ err, leaseId }, 'lease: removing a deferred teardown failed; its claim goes stale');
    }
  }

  /**
   * Tear down here when this node drives the device (or nobody does), else defer it to the owner.
   * When the owner cannot be looked up it is deferred too, to an unknown owner: the deferred pass
   * re-checks ownership, so the node that drives the device runs it (never a node without it).
   * `resumedFrom`: the claimant of an earlier run that did not finish (this run says so).
   */
  async #tearDown(lease: Lease, reason: TeardownReason, resumedFrom?: string): Promise<TeardownRecord> {
    let owner: string | null = null;
    let lookupFailed = false;
    try {
      owner = (await this.#devices.ownerOf?.(lease.deviceId)) ?? null;
    } catch (err) {
      lookupFailed = true;
      this.#log.warn({ err, leaseId: lease.id }, 'lease: owner lookup failed; deferring the teardown');
    }
    if (!lookupFailed && (owner === null || owner === this.#node)) {
      return this.#runTeardown(lease, reason, { resumedFrom, stampFirst: false });
    }
    const at = this.#now();
    const record = this.#record(
      lease,
      reason,
      at,
      [
        ...(resumedFrom === undefined ? [] : [resumedAction(resumedFrom)]),
        owner === null
          ? "deferred to the device's owner (the owner lookup failed; the owner runs and records the teardown)"
          : `deferred to the owner node ${owner} (it runs and records the teardown)`,
      ],
      [],
      at,
    );
    const item: DeferredTeardown = {
      lease,
      reason,
      from: this.#node,
      owner: owner ?? UNKNOWN_OWNER,
      deferredAt: at,
      ...(resumedFrom === undefined ? {} : { resumedFrom }),
    };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#store.deferTeardown(item);
        this.#log.info(
          { leaseId: lease.id, deviceId: lease.deviceId, owner },
          'lease: teardown deferred to the owner',
        );
        return record;
      } catch (err) {
        this.#log.warn({ err, leaseId: lease.id, attempt }, 'lease: deferring teardown failed');
        if (attempt >= DEFER_ATTEMPTS) {
          record.failures.push(
            `deferring the teardown failed ${attempt} times: ${err instanceof Error ? err.message : String(err)}`,
          );
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
      }
    }
    // Nobody will undo this lease on its device: take the device out of service until someone looks.
    try {
      await this.#devices.quarantine?.(
        lease.deviceId,
        `teardown of ${lease.id} (${reason}) could not be deferred to its owner: ${record.failures.join('; ')}`,
      );
      if (this.#devices.quarantine) record.actions.push('quarantined device');
    } catch (err) {
      record.failures.push(`quarantine failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.#log.error({ leaseId: lease.id, deviceId: lease.deviceId }, 'lease: teardown could not be deferred');
    return record;
  }

  /** A teardown record of this node (finished now unless said). */
  #record(
    lease: { id: string; deviceId: string },
    reason: TeardownReason,
    startedAt: number,
    actions: string[],
    failures: string[],
    finishedAt = this.#now(),
  ): TeardownRecord {
    return {
      leaseId: lease.id,
      deviceId: lease.deviceId,
      reason,
      startedAt,
      finishedAt,
      actions,
      failures,
      node: this.#node,
    };
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    this.#inflight.add(promise);
    const forget = (): void => {
      this.#inflight.delete(promise);
    };
    promise.then(forget, forget);
    return promise;
  }

  /**
   * Run a lease's teardown here and record it. While it runs its stamp in the teardowns due is
   * refreshed every third of `stalledTeardownMs` (so a long device reset is not claimed as stalled
   * by another node); `stampFirst` stamps it at once (a run the store did not stamp for this process:
   * a deferred one). `resumedFrom`: the claimant of an earlier run that did not finish.
   */
  async #runTeardown(
    lease: Lease,
    reason: TeardownReason,
    run: { resumedFrom: string | undefined; stampFirst: boolean },
  ): Promise<TeardownRecord> {
    this.#tearingDown.add(lease.id);
    let touching: Promise<void> | undefined;
    const touch = (): Promise<void> =>
      (touching ??= this.#store
        .touchTeardown(lease.id, this.#now(), this.#claimant)
        .then(
          () => undefined,
          (err: unknown) => {
            this.#log.warn({ err, leaseId: lease.id }, 'lease: refreshing the teardown stamp failed');
          },
        )
        .finally(() => {
          touching = undefined;
        }));
    const refresh = setInterval(() => void touch(), Math.max(1, Math.floor(this.#stalledTeardownMs / 3)));
    refresh.unref();
    let retryInMs: number | undefined;
    try {
      if (run.stampFirst) void touch(); // alongside the start of the run, not before it
      const done = await this.#runAndRecord(lease, reason, run.resumedFrom);
      retryInMs = done.retryInMs;
      return done.record;
    } finally {
      clearInterval(refresh);
      if (retryInMs !== undefined) {
        // Stamped so that it goes stale (the stalled-teardown pass runs it) after the backoff.
        await touching;
        await this.#store
          .touchTeardown(lease.id, this.#now() - this.#stalledTeardownMs + retryInMs, this.#claimant)
          .catch((err: unknown) => {
            this.#log.warn({ err, leaseId: lease.id }, 'lease: scheduling the teardown again failed');
          });
      }
      this.#tearingDown.delete(lease.id);
    }
  }

  /**
   * Whether a failed (or about to be repeated) teardown waits for its device: the device did not
   * answer and the retries have not run out. Never throws: when it cannot tell, it waits. Also while
   * this node stops: the teardown stays due in the store, and this node's next process (or another
   * node) runs it again.
   */
  async #waitsForDevice(lease: Lease, failures: readonly string[], startedAt: number): Promise<boolean> {
    const unreachable = this.#devices.unreachable;
    if (unreachable === undefined) return false;
    if (startedAt - (lease.endedAt ?? startedAt) >= this.#teardownRetryMs) return false;
    try {
      return await unreachable.call(this.#devices, lease.deviceId, failures);
    } catch (err) {
      this.#log.warn({ err, leaseId: lease.id }, 'lease: could not tell whether the device answers');
      return true;
    }
  }

  /**
   * Run the teardown and record it; or, when its device did not answer (and the retries have not run
   * out), leave it due and answer `retryInMs` with a record of what happened so far (not stored).
   */
  async #runAndRecord(
    lease: Lease,
    reason: TeardownReason,
    resumedFrom: string | undefined,
  ): Promise<{ record: TeardownRecord; retryInMs?: number }> {
    const startedAt = this.#now();
    for (const [id, entry] of this.#unanswered) if (entry.until < startedAt) this.#unanswered.delete(id);
    const earlier = this.#unanswered.get(lease.id)?.attempts;
    let actions: string[] =
      earlier !== undefined
        ? [`teardown run again (${earlier + 1}): its device did not answer before`]
        : resumedFrom === undefined
          ? []
          : [resumedAction(resumedFrom)];
    let failures: string[] = [];
    // A repeated run first asks whether the device answers now (no run, no journal read, when not).
    const skip = earlier !== undefined && (await this.#waitsForDevice(lease, [], startedAt));
    if (skip) {
      failures.push('the device does not answer yet');
    } else {
      try {
        const result = await this.#teardown.closeLease(lease, reason);
        actions = [...actions, ...result.actions];
        failures = [...result.failures];
      } catch (err) {
        failures.push(`teardown threw: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failures.length > 0 && (skip || (await this.#waitsForDevice(lease, failures, startedAt)))) {
      const attempt = (earlier ?? 0) + 1;
      this.#unanswered.set(lease.id, {
        attempts: attempt,
        until: (lease.endedAt ?? startedAt) + this.#teardownRetryMs + 60_000,
      });
      const retryInMs = teardownBackoffMs(attempt);
      this.#log.warn(
        { leaseId: lease.id, deviceId: lease.deviceId, reason, attempt, retryInMs, failures },
        'lease: teardown waits for its device (it did not answer); it runs again',
      );
      const record = this.#record(
        lease,
        reason,
        startedAt,
        [
          ...actions,
          `teardown pending: the device did not answer (${failures.join('; ')}); ` +
            'the teardown runs again once it is back (the device stays out of the pool meanwhile)',
        ],
        [],
      );
      return { record, retryInMs };
    }
    if (earlier !== undefined) this.#unanswered.delete(lease.id);
    if (failures.length > 0 && earlier !== undefined && lease.endedAt !== undefined) {
      const waited = startedAt - lease.endedAt;
      if (waited >= this.#teardownRetryMs) {
        failures.push(`the device did not answer for ${Math.round(waited / 1000)} s: the retries ran out`);
      }
    }
    if (failures.length > 0 && this.#devices.quarantine) {
      try {
        await this.#devices.quarantine(
          lease.deviceId,
          `teardown failed: teardown of ${lease.id} (${reason}) failed: ${failures.join('; ')}`,
        );
        actions.push('quarantined device');
      } catch (err) {
        failures.push(`quarantine failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const record = this.#record(lease, reason, startedAt, actions, failures);
    const log = { leaseId: lease.id, deviceId: lease.deviceId, reason, failures: failures.length };
    this.#metrics?.leaseTeardowns.inc({ outcome: failures.length > 0 ? 'failed' : 'ok' });
    if (failures.length > 0) this.#log.warn(log, 'lease: teardown failed, device quarantined');
    else this.#log.info(log, 'lease: teardown done');
    try {
      await this.#store.recordTeardown(record);
    } catch (err) {
      // The device stays blocked and the teardown due: once its stamp is stale, a pass runs it again.
      this.#log.error({ err, leaseId: lease.id }, 'lease: recording teardown failed');
    }
    this.#wakeWaiters();
    return { record };
  }
}
