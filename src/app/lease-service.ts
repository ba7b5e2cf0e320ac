/** Lease use cases (acquire, list, get, renew, release) for a caller: what the lease routes and the CLI call. */

import type { LeaseSelector } from '../devices/selector.ts';
import { BridgeError } from '../errors.ts';
import type { Caller, LeaseScopes } from '../lease-session/index.ts';
import type { LeaseManager, ReleaseResult } from '../leases/manager.ts';
import type { EndedLease, Lease } from '../leases/types.ts';

export interface AcquireInput {
  /** Raw outside input: the manager validates it with the one selector schema (keeping every label key). */
  selector: unknown;
  ttlSeconds?: number;
  waitSeconds?: number;
  /** Leave the apps installed during the lease at teardown. */
  keepApps?: boolean;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
  /** Resume a wait under the client's own waiter id (the re-poll protocol). */
  waiterId?: string;
  /** What the caller's tenant may hold at once (its leases and queued waiters). */
  quota?: { leases: number; waiters: number };
}

/** What a caller sees of a waiter (`GET /v1/waiters`). */
export interface WaiterView {
  waiterId: string;
  selector: LeaseSelector;
  tenant: string;
  /** 1 = head of its selector's queue. */
  position: number;
  waitingMs: number;
  /** The bridge node its request waits on. */
  node: string;
}

/** The teardown of a lease released on its owner node whose record is not written yet. */
export class LeaseService {
  readonly #scopes: LeaseScopes;
  readonly #manager: LeaseManager;

  constructor(options: { scopes: LeaseScopes; manager: LeaseManager }) {
    this.#scopes = options.scopes;
    this.#manager = options.manager;
  }

  acquire(caller: Caller, input: AcquireInput): Promise<Lease> {
    return this.#manager.acquire({
      selector: input.selector ?? {},
      ...(input.ttlSeconds === undefined ? {} : { ttlSeconds: input.ttlSeconds }),
      ...(input.waitSeconds === undefined ? {} : { waitSeconds: input.waitSeconds }),
      ...(input.keepApps ? { keepApps: true } : {}),
      tenant: caller.tenant,
      holder: caller.name,
      ...(input.signal === undefined ? {} : { signal: input.signal }),
      ...(input.waiterId === undefined ? {} : { waiterId: input.waiterId }),
      ...(input.quota === undefined ? {} : { quota: input.quota }),
    });
  }

  /** Active leases of the caller's tenant (admins: all). */
  list(caller: Caller): Promise<Lease[]> {
    return this.#manager.list(caller.role === 'admin' ? {} : { tenant: caller.tenant });
  }

  /** The history of ended leases with their teardown records, newest first (admins: every tenant's). */
  teardowns(caller: Caller, limit: number): Promise<EndedLease[]> {
    return this.#manager.listTeardowns(
      caller.role === 'admin' ? { limit } : { tenant: caller.tenant, limit },
    );
  }

  /** Who waits for a device, with their place in the queue: the caller's tenant (admins: all). */
  async waiters(caller: Caller): Promise<WaiterView[]> {
    const now = Date.now();
    const waiters = await this.#manager.listWaiters(caller.role === 'admin' ? {} : { tenant: caller.tenant });
    return waiters.map((w) => ({
      waiterId: w.waiterId,
      selector: w.selector,
      tenant: w.tenant,
      position: w.position,
      waitingMs: Math.max(0, now - w.since),
      node: w.node,
    }));
  }

  /** One lease, ended ones included. */
  get(caller: Caller, id: string, fencingToken?: string): Promise<Lease> {
    return this.#scopes.lease(caller, id, { active: false, fencingToken });
  }

  /** Extend to now + ttlSeconds (default: the lease's own TTL). */
  async renew(
    caller: Caller,
    id: string,
    input: { ttlSeconds?: number; fencingToken?: string } = {},
  ): Promise<Lease> {
    const lease = await this.#scopes.lease(caller, id, { fencingToken: input.fencingToken });
    return this.#manager.renew(lease.id, lease.fencingToken, input.ttlSeconds ?? lease.ttlSeconds);
  }

  /**
   * End the lease and tear it down. `afterLostAnswer`: the owner node was asked first and its answer
   * was lost (timeout, cut), so it may have released the lease already: a lease of the caller's
   * tenant found released answers as released, with the owner's teardown record (or, not recorded
   * yet, with the teardown pending), instead of LEASE_EXPIRED.
   */
  async release(
    caller: Caller,
    id: string,
    fencingToken?: string,
    options: { afterLostAnswer?: boolean } = {},
  ): Promise<ReleaseResult> {
    try {
      const lease = await this.#scopes.lease(caller, id, { fencingToken });
      // The lease read names its device: the manager may end it in one step (nothing to undo here).
      return await this.#manager.release(lease.id, lease.fencingToken, lease);
    } catch (err) {
      if (!options.afterLostAnswer || !(err instanceof BridgeError) || err.code !== 'LEASE_EXPIRED')
        throw err;
      const lease = await this.#scopes.lease(caller, id, { active: false, fencingToken });
      if (lease.state !== 'released') throw err;
      // Not recorded yet: the owner's teardown still runs; its record follows in the teardown history.
      const teardown = await this.#manager.teardownOf(lease.id);
      return teardown === null ? { lease, teardown, teardownPending: { waitedMs: 0 } } : { lease, teardown };
    }
  }
}
