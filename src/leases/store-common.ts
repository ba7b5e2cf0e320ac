/**
 * What the memory and the Redis lease stores share: lease ids, the TTL rule, clock and retention
 * options, copies and the list order. One definition each, so both stores answer alike.
 */

import { randomFillSync } from 'node:crypto';
import type { z } from 'zod';
import type { LeaseSelector } from '../devices/selector.ts';
import { BridgeError, invalidArgument } from '../errors.ts';
import { decodeStored, isStoredRecordError, type StoredRecordError } from '../stored-record.ts';
import { StoredDeferredTeardown, StoredJournalRecord, StoredWaiterInfo } from './stored-records.ts';
import type { DeferredTeardown, DeferredTeardowns, Lease, Waiter } from './types.ts';

export const DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** Random bytes drawn from a pool refilled 4 KiB at a time: one syscall per 273 ids, not per id. */
const ID_BYTES = 15;
const pool = Buffer.alloc(ID_BYTES * 273);
let poolOffset = pool.length;

/** `lease_` + 20 URL-safe random characters (120 bits). */
export function newLeaseId(): string {
  if (poolOffset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const id = pool.toString('base64url', poolOffset, poolOffset + ID_BYTES);
  poolOffset += ID_BYTES;
  return `lease_${id}`;
}

export function copyLease(lease: Lease): Lease {
  return { ...lease, selector: structuredClone(lease.selector) };
}

/** A teardown record passed to `releaseEmpty` for another lease than the one released (a caller bug). */
export function foreignTeardown(leaseId: string, recordLeaseId: string): BridgeError {
  return new BridgeError(
    'INTERNAL',
    `teardown record of lease ${recordLeaseId} passed to release ${leaseId}`,
  );
}

export function checkTtl(ttlSeconds: number): void {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw invalidArgument('ttlSeconds must be a positive number', [
      { path: 'ttlSeconds', message: 'must be > 0' },
    ]);
  }
}

export interface StoreClockOptions {
  /** Clock in ms since the epoch; tests inject a fake one. Default `Date.now`. */
  now?: () => number;
  /** How long ended leases and teardown records are kept. */
  retentionMs?: number;
}

/** A TTL in ms, rounded to the millisecond. */
export function ttlMs(ttlSeconds: number): number {
  return Math.round(ttlSeconds * 1000);
}

/** The instant `ttlSeconds` after `now` (ms). */
export function expiresAfter(now: number, ttlSeconds: number): number {
  return now + ttlMs(ttlSeconds);
}

/** List order of leases: by acquiredAt, then id. */
export function byAcquired(a: Lease, b: Lease): number {
  return a.acquiredAt - b.acquiredAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * A journaled device-state record read back: the object, or `{unreadable: why}` when it is not a JSON
 * object, so one bad record never hides the others (its restorer reports it; `why` names no value).
 */
export function parseJournalRecord(json: string, key?: string): Record<string, unknown> {
  try {
    return decodeStored(StoredJournalRecord, json, {
      kind: 'device-state journal record',
      ...(key === undefined ? {} : { key }),
    });
  } catch (err) {
    if (!isStoredRecordError(err)) throw err;
    return { unreadable: err.message };
  }
}

/** A stored deferred teardown (JSON): StoredRecordError (INTERNAL) naming the first bad field. */
export function parseDeferredTeardown(json: string, leaseId?: string): DeferredTeardown {
  const { lease, resumedFrom, ...rest } = decodeStored(StoredDeferredTeardown, json, {
    kind: 'deferred teardown',
    ...(leaseId === undefined ? {} : { key: leaseId }),
  });
  // The lease inside is taken as stored (a lease store wrote it); its fields that run it are checked.
  return { lease: lease as unknown as Lease, ...rest, ...(resumedFrom === undefined ? {} : { resumedFrom }) };
}

/** Stored deferred teardowns (leaseId → JSON), each parsed on its own: a bad one goes to `invalid`. */
export function parseDeferredTeardowns(entries: Iterable<[string, string]>): DeferredTeardowns {
  const result: DeferredTeardowns = { items: [], invalid: [] };
  for (const [leaseId, json] of entries) {
    try {
      result.items.push(parseDeferredTeardown(json, leaseId));
    } catch (err) {
      if (!isStoredRecordError(err)) throw err;
      result.invalid.push({ leaseId, problem: err.message });
    }
  }
  return result;
}

/** List order of waiters: by queue, then place in it. */
export function byQueuePlace(a: Waiter, b: Waiter): number {
  return (a.queueKey < b.queueKey ? -1 : a.queueKey > b.queueKey ? 1 : 0) || a.position - b.position;
}

/**
 * One stored waiter description (JSON) with its id and place: null when it is not one (a corrupt
 * entry is skipped, never fatal to the listing; `onInvalid` hears why).
 */
export function parseWaiter(
  waiterId: string,
  position: number,
  json: string,
  onInvalid?: (err: StoredRecordError) => void,
): Waiter | null {
  if (!Number.isSafeInteger(position) || position < 1 || waiterId === '') return null;
  let info: z.output<typeof StoredWaiterInfo>;
  try {
    info = decodeStored(StoredWaiterInfo, json, { kind: 'waiter', key: waiterId });
  } catch (err) {
    if (!isStoredRecordError(err)) throw err;
    onInvalid?.(err);
    return null;
  }
  const { clientWaiterId, ...rest } = info;
  return {
    waiterId,
    ...rest,
    selector: rest.selector as LeaseSelector,
    ...(clientWaiterId === undefined ? {} : { clientWaiterId }),
    position,
  };
}

/** The list-waiters reply (flat `waiterId, position, JSON` triples), sorted by queue and place. */
export function parseWaiters(reply: unknown, onInvalid?: (err: StoredRecordError) => void): Waiter[] {
  if (!Array.isArray(reply)) return [];
  const waiters: Waiter[] = [];
  for (let i = 0; i + 2 < reply.length; i += 3) {
    const waiter = parseWaiter(String(reply[i]), Number(reply[i + 1]), String(reply[i + 2]), onInvalid);
    if (waiter !== null) waiters.push(waiter);
  }
  return waiters.sort(byQueuePlace);
}
