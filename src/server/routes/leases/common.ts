/** Schemas and the lease lookup shared by the lease routes (one file per route in this folder). */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { BridgeError } from '../../../errors.ts';
import type { LeaseRef } from '../../../helpers/lease-operations.ts';

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
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a lease id')
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

/** The caller's lease: other tenants get 404 (not 403); ended leases 410. */
export async function leaseFor(
  c: Context<AppEnv>,
  id: string,
  options: { active?: boolean } = {},
): Promise<Lease> {
  const principal = assertRole(c.get('principal'), 'client');
  const manager = c.var.services.leases;
  requireDevices(c.var.services);
  const lease = await manager!.get(id);
  if (lease === null || (principal.role !== 'admin' && lease.tenant !== principal.tenant)) {
    throw new BridgeError('NOT_FOUND', `no lease ${id}`);
  }
  if ((options.active ?? true) && lease.state !== 'active') {
    throw new BridgeError('LEASE_EXPIRED', `lease ${id} is ${lease.state}`, {
      details: { state: lease.state },
    });
  }
  const token = c.req.header('x-fencing-token');
  if (token !== undefined && token !== String(lease.fencingToken)) {
    throw new BridgeError('LEASE_EXPIRED', `fencing token ${token} is stale (the device was leased again)`, {
      details: { fencingToken: token },
    });
  }
  c.set('logger', c.var.logger.child({ leaseId: lease.id, deviceId: lease.deviceId }));
  return lease;
}

export function ref(lease: Lease): LeaseRef {
  return { id: lease.id, deviceId: lease.deviceId, fencingToken: lease.fencingToken };
}

export const leaseResponses = (code: number, description: string) => ({
  [code]: { description, content: { 'application/json': { schema: LeaseSchema } } },
});
