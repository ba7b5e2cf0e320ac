/** Contract of the lease routes: acquire, list, get, renew and release (with its teardown record). */
import { z } from '@hono/zod-openapi';
import { LeaseSelectorSchema as SelectorRule } from '../devices/selector.ts';
import { LEASE_ID_PATTERN, MAX_TEARDOWN_LIST, WAITER_ID_PATTERN } from '../leases/types.ts';

export const LeaseIdParam = z
  .string()
  .regex(LEASE_ID_PATTERN, 'must be a lease id')
  .openapi({ param: { name: 'id', in: 'path' }, example: 'lease_3kT9x0aQ2mZp8LwV1cYb' });

/** The one selector schema (devices/selector.ts), documented as a component. */
export const LeaseSelectorSchema = SelectorRule.meta({ id: 'LeaseSelector' });

export const LeaseSchema = z
  .object({
    id: z.string(),
    deviceId: z.string(),
    tenant: z.string(),
    holder: z.string(),
    fencingToken: z.number().int(),
    acquiredAt: z.number(),
    expiresAt: z.number(),
    ttlSeconds: z.number().int(),
    selector: LeaseSelectorSchema,
    state: z.enum(['active', 'released', 'expired']),
    endedAt: z.number().optional(),
    keepApps: z
      .boolean()
      .optional()
      .openapi({ description: 'apps installed during the lease stay installed at teardown' }),
  })
  .openapi('Lease');

export const LeaseListSchema = z.object({ leases: z.array(LeaseSchema) }).openapi('LeaseList');

export const WaiterSchema = z
  .object({
    waiterId: z.string(),
    selector: LeaseSelectorSchema,
    tenant: z.string(),
    position: z.number().int().min(1).openapi({ description: "1 = head of its selector's queue" }),
    waitingMs: z.number().int().min(0),
    node: z.string().openapi({ description: 'the bridge node the waiting request is on' }),
  })
  .openapi('Waiter');

export const WaiterListSchema = z.object({ waiters: z.array(WaiterSchema) }).openapi('WaiterList');

export const AcquireLeaseBodySchema = z
  .object({
    selector: LeaseSelectorSchema.default({}),
    ttlSeconds: z.number().int().optional().openapi({ description: 'default 300, max 3600' }),
    waitSeconds: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'wait in a FIFO queue per selector (default 0)' }),
    keepApps: z.boolean().optional().openapi({
      description:
        'leave the apps installed during the lease installed at teardown (recorded as kept); default: uninstall them',
    }),
    waiterId: z
      .string()
      .regex(WAITER_ID_PATTERN, 'must be waiter_ and 16 to 64 characters [A-Za-z0-9_-]')
      .optional()
      .openapi({
        description:
          'Re-poll protocol for long waits: a wait under your own waiter id that ends without a device ' +
          '(409, details.waiterId) keeps its place in the queue for a few seconds; send the same request ' +
          "again with the same id to resume it. Keep each request under your load balancer's idle " +
          'timeout (e.g. waitSeconds 20); GET /v1/waiters shows the place.',
      }),
  })
  .strict()
  .openapi('AcquireLease');

export const RenewLeaseBodySchema = z
  .object({
    ttlSeconds: z.number().int().optional().openapi({ description: "default: the lease's ttlSeconds" }),
  })
  .strict()
  .openapi('RenewLease');

export const TeardownSchema = z
  .object({
    leaseId: z.string(),
    deviceId: z.string(),
    reason: z.enum(['released', 'expired']),
    startedAt: z.number(),
    finishedAt: z.number(),
    actions: z.array(z.string()).openapi({ description: 'what was done, e.g. `closed helper session`' }),
    failures: z
      .array(z.string())
      .openapi({ description: 'what failed; non-empty means the device was quarantined' }),
    node: z.string().openapi({ description: 'the bridge node that ran it' }),
  })
  .openapi('Teardown');

/** Where the record of a teardown that was still running at the answer shows up. */
export const TEARDOWN_RECORDS_PATH = '/v1/teardowns';

export const TeardownPendingSchema = z
  .object({
    waitedMs: z.number().int().min(0).openapi({
      description: 'how long the release waited for its teardown (`DEVICEBRIDGE_RELEASE_WAIT_MS`)',
    }),
    records: z.literal(TEARDOWN_RECORDS_PATH).openapi({
      description: 'where the teardown record appears once the teardown ends',
    }),
  })
  .openapi('TeardownPending', {
    description:
      'the teardown was still running when the release answered: it goes on in the background, the ' +
      'device stays blocked until its record is written, and the record then shows in GET /v1/teardowns',
  });

export const ReleaseLeaseResponseSchema = z
  .object({
    lease: LeaseSchema,
    teardown: TeardownSchema.nullable().openapi({
      description: 'the teardown record; null while the teardown still runs (see `teardownPending`)',
    }),
    teardownPending: TeardownPendingSchema.optional(),
  })
  .openapi('ReleasedLease');

/** An ended lease with its recorded teardown (the teardown history). */
export const EndedLeaseSchema = z
  .object({ lease: LeaseSchema, teardown: TeardownSchema })
  .openapi('EndedLease');

/** The history of ended leases: `GET /v1/teardowns?limit=N`. */
export const TeardownListQuerySchema = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_TEARDOWN_LIST)
      .default(20)
      .openapi({ description: `most records to answer (1–${MAX_TEARDOWN_LIST}, default 20)` }),
  })
  .strict();

export const TeardownListSchema = z
  .object({
    teardowns: z.array(EndedLeaseSchema).openapi({
      description: 'ended leases with their teardown records, newest recorded first',
    }),
  })
  .openapi('TeardownList');

export type LeaseSelector = z.infer<typeof LeaseSelectorSchema>;
export type Lease = z.infer<typeof LeaseSchema>;
export type LeaseList = z.infer<typeof LeaseListSchema>;
export type Waiter = z.infer<typeof WaiterSchema>;
export type WaiterList = z.infer<typeof WaiterListSchema>;
export type AcquireLeaseRequest = z.input<typeof AcquireLeaseBodySchema>;
export type RenewLeaseRequest = z.input<typeof RenewLeaseBodySchema>;
export type Teardown = z.infer<typeof TeardownSchema>;
export type ReleaseLeaseResponse = z.infer<typeof ReleaseLeaseResponseSchema>;
export type TeardownPending = z.infer<typeof TeardownPendingSchema>;
export type EndedLease = z.infer<typeof EndedLeaseSchema>;
export type TeardownList = z.infer<typeof TeardownListSchema>;
