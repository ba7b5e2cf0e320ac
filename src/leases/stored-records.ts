/**
 * The schemas of what the lease stores keep, checked on every read (`decodeStored`/`checkStored`):
 * a lease, a lease's selector, a teardown record, a deferred teardown, a waiter's description and a
 * device-state journal record. They check the shape each reader relies on, not the rules the request
 * met when it was written (those were checked then); objects keep fields they do not name, so a
 * record a newer version wrote reads back whole.
 */
import { z } from 'zod';

const text = z.string();
const time = z.number().finite();

/** A selector as stored with a lease or a waiter (the JSON of a validated `LeaseSelector`). */
export const StoredSelector = z.looseObject({
  deviceId: text.optional(),
  labels: z.record(z.string(), z.string()).optional(),
  sdkMin: z.number().optional(),
  sdkMax: z.number().optional(),
});

/** A lease as the store assembles it from its hash (numbers converted, the selector decoded). */
export const StoredLease = z.object({
  id: text.min(1),
  deviceId: text.min(1),
  tenant: text,
  holder: text,
  fencingToken: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  acquiredAt: time,
  expiresAt: time,
  ttlSeconds: time,
  selector: StoredSelector,
  state: z.enum(['active', 'released', 'expired']),
  endedAt: time.optional(),
  keepApps: z.literal(true).optional(),
});

export const StoredTeardownRecord = z.looseObject({
  leaseId: text.min(1),
  deviceId: text.min(1),
  reason: z.enum(['released', 'expired']),
  startedAt: time,
  finishedAt: time,
  actions: z.array(text),
  failures: z.array(text),
  node: text,
});

/** A deferred teardown; the lease inside is taken as stored (a lease store wrote it) past what runs it. */
export const StoredDeferredTeardown = z.object({
  lease: z.looseObject({
    id: text.min(1),
    deviceId: text.min(1),
    fencingToken: z.number().int().max(Number.MAX_SAFE_INTEGER).min(Number.MIN_SAFE_INTEGER),
  }),
  reason: z.enum(['released', 'expired']),
  from: text,
  owner: text,
  deferredAt: time,
  resumedFrom: text.optional(),
});

/** A waiter's description (its id and place come from the queue, not from this JSON). */
export const StoredWaiterInfo = z.object({
  queueKey: text,
  selector: StoredSelector,
  tenant: text,
  node: text,
  since: time,
  clientWaiterId: text.optional(),
});

/** What a helper journaled about the lease's device: an object; its restorer checks its fields. */
export const StoredJournalRecord = z.record(z.string(), z.unknown());
