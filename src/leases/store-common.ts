/**
 * What the memory and the Redis lease stores share: lease ids, the TTL rule, clock and retention
 * options, copies and the list order. One definition each, so both stores answer alike.
 */

import { randomFillSync } from 'node:crypto';
import type { LeaseSelector } from '../devices/selector.ts';
import { BridgeError, invalidArgument } from '../errors.ts';
import { parseStrictJson } from '../strict-json.ts';
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
 * A journaled device-state record read back (outside input): the object, or `{unparsed: text}` when
 * it is not a JSON object, so one bad record never hides the others (its restorer reports it).
 */
export function parseJournalRecord(json: string): Record<string, unknown> {
  try {
    const value = parseStrictJson(json);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // fall through
  }
  return { unparsed: json.slice(0, 200) };
}

/**
 * A stored deferred teardown (JSON), checked field by field: INTERNAL naming the first bad field.
 * The lease inside is taken as stored (it was written by a lease store).
 */
export function parseDeferredTeardown(json: string): DeferredTeardown {
  let value: unknown;
  try {
    value = parseStrictJson(json);
  } catch {
    throw new BridgeError('INTERNAL', 'deferred teardown is not JSON');
  }
  const bad = (field: string): never => {
    throw new BridgeError('INTERNAL', `deferred teardown: ${field} is missing or invalid`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('the record');
  const v = value as Record<string, unknown>;
  const lease = v['lease'] as Record<string, unknown> | null | undefined;
  if (typeof lease !== 'object' || lease === null || Array.isArray(lease)) return bad('lease');
  if (typeof lease['id'] !== 'string' || lease['id'] === '') return bad('lease.id');
  if (typeof lease['deviceId'] !== 'string' || lease['deviceId'] === '') return bad('lease.deviceId');
  if (!Number.isSafeInteger(lease['fencingToken'])) return bad('lease.fencingToken');
  if (v['reason'] !== 'released' && v['reason'] !== 'expired') return bad('reason');
  if (typeof v['from'] !== 'string') return bad('from');
  if (typeof v['owner'] !== 'string') return bad('owner');
  if (!Number.isFinite(v['deferredAt'])) return bad('deferredAt');
  if (v['resumedFrom'] !== undefined && typeof v['resumedFrom'] !== 'string') return bad('resumedFrom');
  return {
    lease: lease as unknown as Lease,
    reason: v['reason'],
    from: v['from'],
    owner: v['owner'],
    deferredAt: v['deferredAt'] as number,
    ...(typeof v['resumedFrom'] === 'string' ? { resumedFrom: v['resumedFrom'] } : {}),
  };
}

/** Stored deferred teardowns (leaseId → JSON), each parsed on its own: a bad one goes to `invalid`. */
export function parseDeferredTeardowns(entries: Iterable<[string, string]>): DeferredTeardowns {
  const result: DeferredTeardowns = { items: [], invalid: [] };
  for (const [leaseId, json] of entries) {
    try {
      result.items.push(parseDeferredTeardown(json));
    } catch (err) {
      result.invalid.push({ leaseId, problem: err instanceof Error ? err.message : String(err) });
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
 * entry is skipped, never fatal to the listing).
 */
export function parseWaiter(waiterId: string, position: number, json: string): Waiter | null {
  let value: unknown;
  try {
    value = parseStrictJson(json);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  const selector = v['selector'];
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector)) return null;
  if (typeof v['queueKey'] !== 'string' || typeof v['tenant'] !== 'string') return null;
  if (typeof v['node'] !== 'string' || !Number.isFinite(v['since'])) return null;
  if (!Number.isSafeInteger(position) || position < 1 || waiterId === '') return null;
  return {
    waiterId,
    queueKey: v['queueKey'],
    selector: selector as LeaseSelector,
    tenant: v['tenant'],
    node: v['node'],
    since: v['since'] as number,
    ...(typeof v['clientWaiterId'] === 'string' ? { clientWaiterId: v['clientWaiterId'] } : {}),
    position,
  };
}

/** The list-waiters reply (flat `waiterId, position, JSON` triples), sorted by queue and place. */
export function parseWaiters(reply: unknown): Waiter[] {
  if (!Array.isArray(reply)) return [];
  const waiters: Waiter[] = [];
  for (let i = 0; i + 2 < reply.length; i += 3) {
    const waiter = parseWaiter(String(reply[i]), Number(reply[i + 1]), String(reply[i + 2]));
    if (waiter !== null) waiters.push(waiter);
  }
  return waiters.sort(byQueuePlace);
}
