/**
 * Redis lease store (production; many bridge nodes share it). Same semantics as MemoryLeaseStore;
 * every multi-key step is one Lua script in `lua/` (see their headers).
 *
 * Keys: `<prefix>{leases}:<kind>:<id>` — every key of one prefix starts with the same hash tag, so
 * on Redis Cluster they all live in ONE slot. That is required for correctness: acquire touches
 * several devices' keys plus the queue and the active set in one script, and claim-expired/release
 * reach lease and device hashes they read from other keys. The trade-off: the lease namespace of a
 * deployment cannot be spread over Cluster shards (lease traffic is small: a few ops per lease).
 * The prefix must not contain `{` or `}` (it would change the tag).
 *
 *   dev:<deviceId>    hash  lease (the active lease, or the ended one whose teardown is not recorded
 *                           yet: the device is blocked until it is), fence (counter, never reset)
 *
 * Fencing tokens stay monotonic per device even when Redis loses its data (restarted empty, a
 * flush): a device's counter starts at the time in microseconds (see lua/acquire.lua), so any node —
 * also one that never saw the device's leases — continues above every token handed out before.
 * Each store instance also remembers the highest token it has seen per device (every lease it
 * acquires or reads) and passes it to `acquire` as a floor (a second guard, against a clock that
 * stepped back on a node that saw the device).
 *   lease:<id>        hash  the lease's fields (plus `teardownBy` once ended: the claimant of its
 *                           teardown's stamp); an ended lease expires a retention (7 days) after its
 *                           teardown is recorded, never while its teardown is due
 *   active            zset  active lease ids by expiresAt
 *   tl:<tenant>       set   the tenant's active lease ids: acquire counts it against the tenant's
 *                           lease quota in the step that grants; every way a lease ends leaves it
 *   teardowns-due     zset  ended lease ids whose teardown is not recorded yet, by stamp time: the
 *                           lease's end, then each claim (claim-stalled) or touch of a running
 *                           teardown; a stale stamp means its run never finished: it is run again
 *   q:<queueKey>      zset  waiters by arrival sequence;  qd:<queueKey> hash waiter -> deadline
 *   queues            set   queue keys that have waiters;  qseq  arrival counter
 *   waiters           hash  waiterId -> {queueKey, selector, tenant, node, since, clientWaiterId?}
 *                           JSON (listing; deleted wherever the waiter leaves: acquired, dequeued,
 *                           pruned)
 *   td:<leaseId>      string teardown record JSON, expires after the retention
 *   tdi               zset  lease ids of recorded teardowns by time recorded (history, newest last;
 *                           trimmed to the retention and TEARDOWN_INDEX_MAX entries in batches, once
 *                           it holds 1/64 more); tdi:<tenant> the same per tenant
 *   ds:<leaseId>      hash  the lease's device-state journal (key -> JSON), taken by its teardown
 *   deferred-claims   hash  leaseId -> "<claimedAt ms>:<node>" (who runs a deferred teardown; a stale
 *                           claim is re-taken: the record stays until its teardown is recorded)
 *   deferred          hash  leaseId -> deferred teardown JSON (for the device's owner; the hash
 *                           expires after the retention since its last write)
 *   wake              pub/sub channel: a device freed while a queue had waiters, or a queue head
 *                     moved (`onWakeup`)
 *
 * Time: the client passes `now` (ms) into every script (default Date.now, injectable for tests)
 * rather than the scripts reading Redis TIME — so tests control expiry, at the price that bridge
 * nodes' clocks must agree (NTP); a node whose clock is ahead expires leases early by its skew.
 */

import type { Redis } from 'ioredis';
import type { LeaseSelector } from '../devices/selector.ts';
import { BridgeError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { closeRedis, openRedis } from '../redis/connection.ts';
import { KeySpace } from '../redis/keys.ts';
import { checkStored, decodeStored, isStoredRecordError, type StoredRecordError } from '../stored-record.ts';
import { LeaseFailure, quotaError } from './errors.ts';
import { LeaseScripts } from './redis-scripts.ts';
import {
  byAcquired,
  checkTtl,
  DEFAULT_RETENTION_MS,
  expiresAfter,
  foreignTeardown,
  newLeaseId,
  parseDeferredTeardowns,
  parseJournalRecord,
  parseWaiters,
  type StoreClockOptions,
  ttlMs,
} from './store-common.ts';
import { StoredLease, StoredSelector, StoredTeardownRecord } from './stored-records.ts';
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

export const DEFAULT_PREFIX = 'devicebridge:';
export const HASH_TAG = '{leases}';
/** The wake-up message of a deferred teardown (every other wake-up publishes '1'). */
const DEFERRED_WAKEUP = 'd';

/**
 * Most entries a teardown history index keeps after a trim. Trims are batched (includes/
 * index-teardown.lua): an index holds at most this plus 1/64 of it between trims.
 */
export const TEARDOWN_INDEX_MAX = 10_000;

/** Every key of the lease store, built in one place (see the table at the top of this file). */
export class LeaseKeys {
  readonly #space: KeySpace;
  /** `<prefix>{leases}:`; the scripts that reach keys named inside other keys build them from it. */
  readonly base: string;
  // The store's fixed keys, built once (several go into every lease cycle).
  readonly active: string;
  /** Zset of the ended leases whose teardown is due, by stamp time. */
  readonly teardownsDue: string;
  readonly deferred: string;
  readonly deferredClaims: string;
  readonly queues: string;
  /** Hash waiterId -> description JSON (for listing waiters). */
  readonly waiterInfo: string;
  readonly queueSequence: string;
  /** The pub/sub channel of wake-ups (a channel, not a key: no slot, nothing stored). */
  readonly wakeups: string;
  /** The history of every tenant's recorded teardowns. */
  readonly #teardownIndex: string;

  constructor(prefix: string) {
    this.#space = new KeySpace(prefix, HASH_TAG);
    this.base = this.#space.base;
    this.active = this.#space.key('active');
    this.teardownsDue = this.#space.key('teardowns-due');
    this.deferred = this.#space.key('deferred');
    this.deferredClaims = this.#space.key('deferred-claims');
    this.queues = this.#space.key('queues');
    this.waiterInfo = this.#space.key('waiters');
    this.queueSequence = this.#space.key('qseq');
    this.wakeups = this.#space.key('wake');
    this.#teardownIndex = this.#space.key('tdi');
  }
  dev(deviceId: string): string {
    return this.#space.key('dev', deviceId);
  }
  lease(leaseId: string): string {
    return this.#space.key('lease', leaseId);
  }
  /** The tenant's active lease ids (counted against its lease quota). */
  tenantLeases(tenant: string): string {
    return this.#space.key('tl', tenant);
  }
  queue(queueKey: string): string {
    return this.#space.key('q', queueKey);
  }
  queueDeadlines(queueKey: string): string {
    return this.#space.key('qd', queueKey);
  }
  teardown(leaseId: string): string {
    return this.#space.key('td', leaseId);
  }
  /** The history of recorded teardowns: every tenant's, or one tenant's. */
  teardownIndex(tenant?: string): string {
    return tenant === undefined ? this.#teardownIndex : this.#space.key('tdi', tenant);
  }
  /** Hash of what helpers journaled about the lease's device (key → JSON record). */
  deviceState(leaseId: string): string {
    return this.#space.key('ds', leaseId);
  }
}

export interface RedisLeaseStoreOptions extends StoreClockOptions {
  /** Connect to this URL (the store owns and closes the connection). Default redis://127.0.0.1:6379. */
  url?: string;
  /** Use this connection instead (not closed by `close()`). */
  client?: Redis;
  /** Key prefix, default `devicebridge:`. */
  prefix?: string;
  /** Where connection errors of an owned connection are logged. */
  logger?: Logger;
  /** Most entries a teardown history index keeps after a trim (default TEARDOWN_INDEX_MAX; tests). */
  teardownIndexMax?: number;
}

/**
 * The lease hash fields in the order every lease script answers a lease: one value per field, null
 * for a field the hash lacks. `lua/includes/lease-fields.lua` lists the same fields in the same order
 * (a unit test compares the two); `leaseFromReply` is the one decoder.
 */
export const LEASE_FIELDS = [
  'id',
  'deviceId',
  'tenant',
  'holder',
  'fencingToken',
  'acquiredAt',
  'expiresAt',
  'ttlSeconds',
  'selector',
  'state',
  'endedAt',
  'keepApps',
] as const;

/**
 * Parse a lease as the scripts answer it (the values of LEASE_FIELDS, in that order): a
 * StoredRecordError naming the lease and its first bad field when the hash holds something else.
 */
export function leaseFromReply(reply: unknown): Lease {
  if (!Array.isArray(reply) || reply.length !== LEASE_FIELDS.length) {
    throw new BridgeError('INTERNAL', 'malformed lease reply from Redis');
  }
  const [id, deviceId, tenant, holder, fencingToken, acquiredAt, expiresAt, ttlSeconds, selector, state] =
    reply as unknown[];
  const endedAt: unknown = reply[10];
  const keepApps: unknown = reply[11];
  const ref = { kind: 'lease', key: leaseText(id, '') };
  const lease = checkStored(
    StoredLease,
    {
      id: ref.key,
      deviceId: leaseText(deviceId, ''),
      tenant: leaseText(tenant, ''),
      holder: leaseText(holder, ''),
      fencingToken: leaseNumber(fencingToken),
      acquiredAt: leaseNumber(acquiredAt),
      expiresAt: leaseNumber(expiresAt),
      ttlSeconds: leaseNumber(ttlSeconds),
      selector: decodeStored(StoredSelector, leaseText(selector, '{}'), { ...ref, at: 'selector' }),
      state: leaseText(state, 'expired'),
      ...(endedAt === null || endedAt === undefined ? {} : { endedAt: leaseNumber(endedAt) }),
      ...(keepApps === '1' ? { keepApps: true } : {}),
    },
    ref,
  );
  return lease as Lease;
}

/** A text field of a lease reply; `missing` when the hash lacks it (nil). */
function leaseText(raw: unknown, missing: string): string {
  return raw === null || raw === undefined ? missing : String(raw);
}

/** A number field of a lease reply; NaN (refused by the schema) when missing or not a number. */
function leaseNumber(raw: unknown): number {
  return raw === null || raw === undefined ? Number.NaN : Number(raw);
}

/** A stored teardown record (JSON); `leaseId` names it when the caller knows it. */
function decodeTeardownRecord(json: string, leaseId?: string): TeardownRecord {
  const ref = { kind: 'teardown record', ...(leaseId === undefined ? {} : { key: leaseId }) };
  return decodeStored(StoredTeardownRecord, json, ref) as TeardownRecord;
}

export class RedisLeaseStore implements LeaseStore {
  readonly #client: Redis;
  readonly #owned: boolean;
  readonly #scripts: LeaseScripts;
  readonly #keys: LeaseKeys;
  readonly #now: () => number;
  readonly #retentionMs: number;
  readonly #indexMax: number;
  readonly #url: string | undefined;
  readonly #logger: Logger | undefined;
  /** The subscriber connection of `onWakeup`, opened on first use. */
  #subscriber: Redis | undefined;
  readonly #wakeups = new Set<(kind: WakeupKind) => void>();
  /** The highest fencing token seen per device (the floor of the next acquire). */
  readonly #fences = new Map<string, number>();

  constructor(options: RedisLeaseStoreOptions = {}) {
    this.#url = options.url;
    this.#logger = options.logger;
    this.#keys = new LeaseKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#owned = options.client === undefined;
    this.#client =
      options.client ??
      openRedis({
        url: options.url,
        role: 'leases',
        logger: options.logger,
        // No auto-pipelining: each command is written at once. Batching a tick's commands into one
        // write made concurrent callers move in lockstep — every reply of a batch arrives together,
        // every caller's next command joins the next batch — so the client handled a whole batch
        // while Redis idled and then waited while Redis ran it. Written at once, Redis works on the
        // first commands while the client still builds the rest: measured (RESULTS.md, leaseops2)
        // +29-70 % lease cycles/s at 16 in flight, with no more client or Redis CPU per cycle.
      });
    this.#scripts = new LeaseScripts(this.#client);
    this.#now = options.now ?? Date.now;
    this.#retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.#indexMax = options.teardownIndexMax ?? TEARDOWN_INDEX_MAX;
  }

  /** The common start of every key (`<prefix>{leases}:`), e.g. for SCAN in tests and tooling. */
  get keyBase(): string {
    return this.#keys.base;
  }

  async acquire(request: AcquireRequest): Promise<Lease | null> {
    checkTtl(request.ttlSeconds);
    const quota = request.leaseQuota;
    // With a quota the script runs even with no candidate: a tenant at its quota is refused, not queued.
    if (request.candidates.length === 0 && quota === undefined) return null;
    const now = this.#now();
    const id = newLeaseId();
    const queued = request.queueKey !== undefined;
    const queueKey = request.queueKey ?? '';
    const expiresAt = expiresAfter(now, request.ttlSeconds);
    const selector = JSON.stringify(request.selector);
    const reply = await this.#scripts.run(
      'acquire',
      [
        this.#keys.active,
        this.#keys.queue(queueKey),
        this.#keys.queueDeadlines(queueKey),
        this.#keys.lease(id),
        this.#keys.waiterInfo,
        this.#keys.tenantLeases(request.tenant),
        ...request.candidates.map((d) => this.#keys.dev(d)),
      ],
      [
        now,
        expiresAt,
        id,
        request.tenant,
        request.holder,
        request.ttlSeconds,
        selector,
        queued ? '1' : '0',
        request.waiterId ?? '',
        request.keepApps ? '1' : '0',
        quota ?? '',
        ...request.candidates.map((d) => this.#fences.get(d) ?? 0),
      ],
    );
    if (!Array.isArray(reply)) return null;
    if (Number(reply[0]) === LeaseFailure.OverQuota && quota !== undefined) {
      throw quotaError('leases', request.tenant, Number(reply[1]), quota);
    }
    const deviceId = request.candidates[Number(reply[0]) - 1];
    if (deviceId === undefined) throw new BridgeError('INTERNAL', 'malformed acquire reply from Redis');
    // A queued waiter got its device: the next one is the head now.
    if (request.waiterId !== undefined) await this.#wake();
    return this.#seen({
      id,
      deviceId,
      tenant: request.tenant,
      holder: request.holder,
      fencingToken: Number(reply[1]),
      acquiredAt: now,
      expiresAt,
      ttlSeconds: request.ttlSeconds,
      // What a later get() returns: the selector as stored (a JSON round trip of the bytes just
      // written, not a read of stored data).
      selector: JSON.parse(selector) as LeaseSelector,
      state: 'active',
      ...(request.keepApps ? { keepApps: true } : {}),
    });
  }

  /** Remember the lease's fencing token as its device's floor; resolves the lease. */
  #seen<T extends Lease | null>(lease: T): T {
    if (lease !== null && lease.fencingToken > (this.#fences.get(lease.deviceId) ?? 0)) {
      this.#fences.set(lease.deviceId, lease.fencingToken);
    }
    return lease;
  }

  async get(leaseId: string): Promise<Lease | null> {
    const reply = await this.#client.hmget(this.#keys.lease(leaseId), ...LEASE_FIELDS);
    // The id is written with every lease: without it there is no such lease.
    if (reply[0] === null) return null;
    return this.#seen(leaseFromReply(reply));
  }

  async leaseOfDevice(deviceId: string): Promise<Lease | null> {
    const reply = await this.#scripts.run('lease-of-device', [this.#keys.dev(deviceId)], [this.#keys.base]);
    return reply === 0 ? null : this.#seen(leaseFromReply(reply));
  }

  /**
   * The leases of a listing reply; one that cannot be read is left out with a warning naming it (it
   * stays in the store as it is: one bad lease must not hide the others).
   */
  #leasesFromReply(reply: unknown, during: string): Lease[] {
    if (!Array.isArray(reply)) return [];
    const leases: Lease[] = [];
    for (const entry of reply) {
      const lease = this.#readable(() => leaseFromReply(entry), during);
      if (lease !== null) leases.push(this.#seen(lease));
    }
    return leases;
  }

  /** `read()`, or null with a warning when it meets a stored record it cannot read. */
  #readable<T>(read: () => T, during: string): T | null {
    try {
      return read();
    } catch (err) {
      if (!isStoredRecordError(err)) throw err;
      this.#skipped(err, during);
      return null;
    }
  }

  #skipped(err: StoredRecordError, during: string): void {
    this.#logger?.warn(
      { kind: err.kind, key: err.key, field: err.field, err: err.message },
      `lease store: ${during} skipped a record it cannot read`,
    );
  }

  async list(filter: { tenant?: string } = {}): Promise<Lease[]> {
    const reply = await this.#scripts.run(
      'list-active',
      [this.#keys.active],
      [this.#keys.base, filter.tenant ?? ''],
    );
    return this.#leasesFromReply(reply, 'list').sort(byAcquired);
  }

  async renew(leaseId: string, fencingToken: number, ttlSeconds: number): Promise<Lease> {
    checkTtl(ttlSeconds);
    const now = this.#now();
    const reply = await this.#scripts.run(
      'renew',
      [this.#keys.lease(leaseId), this.#keys.active],
      [now, String(fencingToken), ttlSeconds, expiresAfter(now, ttlSeconds)],
      { leaseId },
    );
    return this.#seen(leaseFromReply(reply));
  }

  async release(leaseId: string, fencingToken?: number, claimant = ''): Promise<Lease | null> {
    const reply = await this.#scripts.run(
      'release',
      [this.#keys.lease(leaseId), this.#keys.active, this.#keys.teardownsDue],
      [this.#now(), fencingToken === undefined ? '' : String(fencingToken), claimant],
      { leaseId },
    );
    return reply === 0 ? null : this.#seen(leaseFromReply(reply));
  }

  async releaseEmpty(
    leaseId: string,
    fencingToken: number | undefined,
    teardown: TeardownRecord,
    claimant = '',
  ): Promise<{ lease: Lease; teardown: TeardownRecord | null } | null> {
    if (teardown.leaseId !== leaseId) throw foreignTeardown(leaseId, teardown.leaseId);
    const now = this.#now();
    // release + record-teardown in one script (see its header): one round trip instead of two.
    const reply = await this.#scripts.run(
      'release-empty',
      [
        this.#keys.lease(leaseId),
        this.#keys.active,
        this.#keys.teardown(leaseId),
        this.#keys.deviceState(leaseId),
        this.#keys.queues,
        this.#keys.teardownIndex(),
        this.#keys.teardownsDue,
      ],
      [
        now,
        fencingToken === undefined ? '' : String(fencingToken),
        this.#retentionMs,
        this.#keys.base,
        teardown.deviceId,
        JSON.stringify(teardown),
        this.#keys.wakeups,
        this.#indexMax,
        claimant,
      ],
      { leaseId },
    );
    if (reply === 0) return null;
    if (!Array.isArray(reply) || reply.length !== 2) {
      throw new BridgeError('INTERNAL', 'malformed release-empty reply from Redis');
    }
    const lease = this.#seen(leaseFromReply(reply[1]));
    return { lease, teardown: Number(reply[0]) === 1 ? teardown : null };
  }

  async checkFence(deviceId: string, leaseId: string, fencingToken: number): Promise<Lease> {
    const reply = await this.#scripts.run(
      'check-fence',
      [this.#keys.lease(leaseId), this.#keys.dev(deviceId)],
      [deviceId, String(fencingToken), this.#now()],
      { leaseId, deviceId },
    );
    return this.#seen(leaseFromReply(reply));
  }

  async claimExpired(now: number, limit = 100, claimant = ''): Promise<Lease[]> {
    const reply = await this.#scripts.run(
      'claim-expired',
      [this.#keys.active, this.#keys.teardownsDue],
      [now, Math.max(0, Math.floor(limit)), this.#keys.base, claimant],
    );
    return this.#leasesFromReply(reply, 'claim-expired');
  }

  async claimStalledTeardowns(
    now: number,
    staleMs: number,
    limit: number,
    claimant: string,
    options: { claimantPrefix?: string } = {},
  ): Promise<DueTeardown[]> {
    const reply = await this.#scripts.run(
      'claim-stalled',
      [this.#keys.teardownsDue],
      [
        now,
        now - Math.max(0, Math.floor(staleMs)),
        Math.max(0, Math.floor(limit)),
        claimant,
        this.#keys.base,
        options.claimantPrefix ?? '',
      ],
    );
    if (!Array.isArray(reply)) return [];
    const due: DueTeardown[] = [];
    for (const entry of reply) {
      const [fields, by, at] = entry as [unknown, unknown, unknown];
      const lease = this.#readable(() => leaseFromReply(fields), 'claim-stalled');
      if (lease === null) continue;
      this.#seen(lease);
      due.push({
        lease,
        reason: lease.state === 'expired' ? 'expired' : 'released',
        claimant: by === null || by === undefined ? '' : String(by),
        stampedAt: Number(at),
      });
    }
    return due;
  }

  async touchTeardown(leaseId: string, now: number, claimant: string): Promise<boolean> {
    const reply = await this.#scripts.run(
      'touch-teardown',
      [this.#keys.teardownsDue, this.#keys.lease(leaseId)],
      [leaseId, now, claimant],
    );
    return Number(reply) === 1;
  }

  async enqueue(
    queueKey: string,
    waiterId: string,
    ttlSeconds: number,
    info?: WaiterInfo,
    options: EnqueueOptions = {},
  ): Promise<void> {
    checkTtl(ttlSeconds);
    const ms = ttlMs(ttlSeconds);
    const now = this.#now();
    const quota = info === undefined ? undefined : options.waiterQuota;
    const reply = await this.#scripts.run(
      'enqueue',
      [
        this.#keys.queue(queueKey),
        this.#keys.queueDeadlines(queueKey),
        this.#keys.queues,
        this.#keys.queueSequence,
        this.#keys.waiterInfo,
      ],
      [
        waiterId,
        now + ms,
        queueKey,
        ms,
        info === undefined ? '' : JSON.stringify({ queueKey, ...info }),
        now,
        this.#keys.base,
        quota === undefined ? '' : info!.tenant,
        quota ?? '',
      ],
    );
    if (Array.isArray(reply) && Number(reply[0]) === LeaseFailure.OverQuota && quota !== undefined) {
      throw quotaError('waiters', info!.tenant, Number(reply[1]), quota);
    }
  }

  async listWaiters(filter: { tenant?: string } = {}): Promise<Waiter[]> {
    const reply = await this.#scripts.run(
      'list-waiters',
      [this.#keys.waiterInfo, this.#keys.queues],
      [this.#now(), this.#keys.base, filter.tenant ?? ''],
    );
    return parseWaiters(reply, (err) => this.#skipped(err, 'list-waiters'));
  }

  /** Number of stored waiter descriptions (tests: they must leave with their waiter). */
  async waiterDescriptionCount(): Promise<number> {
    return Number(await this.#client.hlen(this.#keys.waiterInfo));
  }

  async dequeue(queueKey: string, waiterId: string): Promise<void> {
    const removed = await this.#scripts.run(
      'dequeue',
      [
        this.#keys.queue(queueKey),
        this.#keys.queueDeadlines(queueKey),
        this.#keys.queues,
        this.#keys.waiterInfo,
      ],
      [waiterId, queueKey],
    );
    if (Number(removed) === 1) await this.#wake();
  }

  async waiting(queueKey?: string): Promise<number> {
    const reply = await this.#scripts.run(
      'waiting',
      [this.#keys.queues, this.#keys.waiterInfo],
      [this.#now(), this.#keys.base, queueKey ?? ''],
    );
    return Number(reply);
  }

  async recordTeardown(record: TeardownRecord): Promise<void> {
    // The script publishes the wake-up itself, only when it freed the device and someone waits.
    await this.#scripts.run(
      'record-teardown',
      [
        this.#keys.teardown(record.leaseId),
        this.#keys.dev(record.deviceId),
        this.#keys.lease(record.leaseId),
        this.#keys.queues,
        this.#keys.teardownIndex(),
        this.#keys.teardownsDue,
      ],
      [
        JSON.stringify(record),
        record.leaseId,
        this.#retentionMs,
        this.#keys.wakeups,
        this.#now(),
        this.#keys.base,
        this.#indexMax,
      ],
    );
  }

  /** Publish a wake-up; a failed publish only costs the waiters a poll interval. */
  async #wake(kind: WakeupKind = 'waiters'): Promise<void> {
    await this.#client
      .publish(this.#keys.wakeups, kind === 'deferred' ? DEFERRED_WAKEUP : '1')
      .catch((err: Error) => {
        this.#logger?.warn({ err: err.message }, 'lease: wake-up publish failed');
      });
  }

  async onWakeup(listener: (kind: WakeupKind) => void): Promise<() => Promise<void>> {
    const own = (kind: WakeupKind): void => listener(kind);
    this.#wakeups.add(own);
    if (this.#subscriber === undefined) {
      // A connection in subscriber mode takes no other commands: one of its own, shared by listeners.
      const subscriber = this.#owned
        ? openRedis({ url: this.#url, role: 'lease-wakeups', logger: this.#logger })
        : this.#client.duplicate({ lazyConnect: true });
      this.#subscriber = subscriber;
      subscriber.on('message', (channel: string, message: string) => {
        if (channel !== this.#keys.wakeups) return;
        // '1' (the Lua scripts' and waiters' wake-up) or 'd' (a deferred teardown).
        const kind: WakeupKind = message === DEFERRED_WAKEUP ? 'deferred' : 'waiters';
        for (const wake of [...this.#wakeups]) wake(kind);
      });
      // ioredis subscribes again after a reconnect, but not when the first SUBSCRIBE failed (Redis
      // down at start): subscribe on every `ready` too (SUBSCRIBE is idempotent).
      subscriber.on('ready', () => {
        subscriber.subscribe(this.#keys.wakeups).catch(() => undefined);
      });
      await subscriber.subscribe(this.#keys.wakeups).catch((err: Error) => {
        this.#logger?.warn({ err: err.message }, 'lease: wake-up subscription failed (waiters poll)');
      });
    }
    return async () => {
      this.#wakeups.delete(own);
      if (this.#wakeups.size === 0) await this.#closeSubscriber();
    };
  }

  async #closeSubscriber(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    if (subscriber) await closeRedis(subscriber);
  }

  async saveDeviceState(leaseId: string, key: string, record: Record<string, unknown>): Promise<void> {
    const hash = this.#keys.deviceState(leaseId);
    // HSETNX: the first record of a key wins (a second enable must not journal its own changes).
    const replies = await this.#client
      .multi()
      .hsetnx(hash, key, JSON.stringify(record))
      .pexpire(hash, this.#retentionMs)
      .exec();
    const failed = replies?.find(([err]) => err !== null)?.[0];
    if (failed) throw failed;
    if (replies === null) throw new BridgeError('UNAVAILABLE', 'the device-state journal write was aborted');
  }

  async takeDeviceState(
    leaseId: string,
    keys?: readonly string[],
  ): Promise<Record<string, Record<string, unknown>>> {
    const hash = this.#keys.deviceState(leaseId);
    if (keys !== undefined) {
      if (keys.length === 0) return {};
      // The named fields only, read and deleted in one transaction; the rest stays for teardown.
      const replies = await this.#client
        .multi()
        .hmget(hash, ...keys)
        .hdel(hash, ...keys)
        .exec();
      const [err, values] = replies?.[0] ?? [null, []];
      if (err) throw err;
      const out: Record<string, Record<string, unknown>> = {};
      for (const [i, json] of ((values ?? []) as Array<string | null>).entries()) {
        if (json !== null) out[keys[i]!] = parseJournalRecord(json, `${leaseId} ${keys[i]}`);
      }
      return out;
    }
    // Read and delete in one transaction: two teardowns never both restore.
    const replies = await this.#client.multi().hgetall(hash).del(hash).exec();
    const [err, fields] = replies?.[0] ?? [null, {}];
    if (err) throw err;
    const out: Record<string, Record<string, unknown>> = {};
    for (const [key, json] of Object.entries((fields ?? {}) as Record<string, string>)) {
      out[key] = parseJournalRecord(json, `${leaseId} ${key}`);
    }
    return out;
  }

  async deferTeardown(item: DeferredTeardown): Promise<void> {
    const replies = await this.#client
      .multi()
      .hset(this.#keys.deferred, item.lease.id, JSON.stringify(item))
      .pexpire(this.#keys.deferred, this.#retentionMs)
      .exec();
    const failed = replies?.find(([err]) => err !== null)?.[0];
    if (failed) throw failed;
    // The device's owner runs it at once (its wake-up listener), not at its next periodic pass.
    await this.#wake('deferred');
  }

  async deferredTeardowns(): Promise<DeferredTeardowns> {
    return parseDeferredTeardowns(Object.entries(await this.#client.hgetall(this.#keys.deferred)));
  }

  async claimDeferredTeardown(leaseId: string, claimant: string, staleMs: number): Promise<boolean> {
    const reply = await this.#scripts.run(
      'claim-deferred',
      [this.#keys.deferred, this.#keys.deferredClaims],
      [leaseId, this.#now(), Math.max(0, Math.floor(staleMs)), claimant, this.#retentionMs],
    );
    return Number(reply) === 1;
  }

  async takeDeferredTeardown(leaseId: string): Promise<boolean> {
    const replies = await this.#client
      .multi()
      .hdel(this.#keys.deferred, leaseId)
      .hdel(this.#keys.deferredClaims, leaseId)
      .exec();
    const [err, removed] = replies?.[0] ?? [null, 0];
    if (err) throw err;
    return removed === 1;
  }

  async listTeardowns(filter: { tenant?: string; limit: number }): Promise<EndedLease[]> {
    const limit = Math.max(0, Math.min(MAX_TEARDOWN_LIST, Math.floor(filter.limit)));
    const reply = await this.#scripts.run(
      'list-teardowns',
      [this.#keys.teardownIndex(filter.tenant)],
      [this.#keys.base, limit, this.#now() - this.#retentionMs],
    );
    if (!Array.isArray(reply)) return [];
    const ended: EndedLease[] = [];
    for (const entry of reply) {
      const [record, fields] = entry as [string, unknown];
      const found = this.#readable(
        () => ({ lease: leaseFromReply(fields), teardown: decodeTeardownRecord(String(record)) }),
        'list-teardowns',
      );
      if (found !== null) ended.push(found);
    }
    return ended;
  }

  async getTeardown(leaseId: string): Promise<TeardownRecord | null> {
    const json = await this.#client.get(this.#keys.teardown(leaseId));
    return json === null ? null : decodeTeardownRecord(json, leaseId);
  }

  async close(): Promise<void> {
    this.#wakeups.clear();
    await this.#closeSubscriber();
    if (this.#owned) await closeRedis(this.#client);
  }
}
