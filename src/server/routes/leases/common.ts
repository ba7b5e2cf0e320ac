/** Schemas and the lease lookup shared by the lease routes (one file per route in this folder). */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { DeviceSide } from '../../../app/index.ts';
import { type Caller, LEASE_ID_PATTERN, type LeaseScope } from '../../../app/lease-scope.ts';

export { MAX_DEADLINE_MS } from '../../../helpers/snapshot/driver.ts';

import { MAX_DEADLINE_MS } from '../../../helpers/snapshot/driver.ts';
import { LeaseSelectorSchema } from '../../../leases/selector.ts';
import type { Lease } from '../../../leases/types.ts';
import type { AppEnv } from '../../env.ts';
import { assertRole } from '../../middleware/auth.ts';
import { requireDevices } from '../devices.ts';

/** Body limits of the lease routes (gestures carry touch plans; the rest a few fields). */
export const SMALL_BODY_BYTES = 16 * 1024;
export const GESTURE_BODY_BYTES = 256 * 1024;

export const LeaseIdParam = z
  .string()
  .regex(LEASE_ID_PATTERN, 'must be a lease id')
  .openapi({ param: { name: 'id', in: 'path' }, example: 'lease_3kT9x0aQ2mZp8LwV1cYb' });

/** The one selector schema (leases/selector.ts), documented here. */
export const Selector = LeaseSelectorSchema.meta({ id: 'LeaseSelector' });

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
    selector: Selector,
    state: z.enum(['active', 'released', 'expired']),
    endedAt: z.number().optional(),
  })
  .openapi('Lease');

export const CaptureFields = {
  waitForIdleTimeoutMs: z.number().int().optional(),
  waitForIdleQuietMs: z.number().int().optional(),
  timeoutMs: z.number().int().optional(),
  maxDepth: z.number().int().optional(),
  maxNodes: z.number().int().optional(),
};
export const AttemptSchema = z
  .object({ transport: z.enum(['session', 'one-shot']), outcome: z.string(), ms: z.number() })
  .openapi('Attempt');
export const DeadlineField = z
  .number()
  .int()
  .min(1)
  .max(MAX_DEADLINE_MS)
  .optional()
  .openapi({ description: 'the whole request, fallback included (default timeoutMs + 10000)' });
export const TransportField = z.enum(['auto', 'session', 'one-shot']).default('auto');

export function view(lease: Lease) {
  return { ...lease, selector: lease.selector as z.infer<typeof Selector> };
}

/** The caller (any token; admins see every tenant) and the device side's use cases. */
export function useCases(c: Context<AppEnv>): { caller: Caller; side: DeviceSide } {
  const caller = assertRole(c.get('principal'), 'client');
  return { caller, side: requireDevices(c.var.services) };
}

/** The caller's `X-Fencing-Token`, when given. */
export const fencingTokenOf = (c: Context<AppEnv>): string | undefined => c.req.header('x-fencing-token');

/** Log the rest of the request with the lease and its device. */
export function logLease(c: Context<AppEnv>, lease: Lease): void {
  c.set('logger', c.var.logger.child({ leaseId: lease.id, deviceId: lease.deviceId }));
}

/**
 * The scope of a lease-scoped helper call: the one the route's guard resolved (lease read once,
 * tenancy and fencing checked, owner found), else resolved here. Other tenants get 404 (not 403);
 * ended leases and stale fencing tokens 410.
 */
export async function scopeFor(
  c: Context<AppEnv>,
  id: string,
): Promise<{ side: DeviceSide; scope: LeaseScope }> {
  const { caller, side } = useCases(c);
  const scope = await (c.get('leaseScope') ??
    side.scopes.open(caller, id, { fencingToken: fencingTokenOf(c), locate: false }));
  logLease(c, scope.lease);
  return { side, scope };
}

export const leaseResponses = (code: number, description: string) => ({
  [code]: { description, content: { 'application/json': { schema: LeaseSchema } } },
});
