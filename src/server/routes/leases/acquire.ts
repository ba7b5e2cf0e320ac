import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import {
  AcquireLeaseBodySchema,
  BODY_ERRORS,
  errorResponses,
  LeaseSchema,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { TenantQuota } from '../../../auth/tokens.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { SMALL_BODY_BYTES, useCases, view } from './common.ts';

export const acquireLeaseRoute = createRoute({
  method: 'post',
  path: '/v1/leases',
  operationId: 'acquireLease',
  tags: ['leases'],
  summary: 'Lease one device matching the selector, waiting up to waitSeconds in a FIFO queue',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES) }),
  request: {
    body: { content: { 'application/json': { schema: AcquireLeaseBodySchema } }, required: true },
  },
  responses: {
    201: { description: 'leased', content: { 'application/json': { schema: LeaseSchema } } },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, 'NOT_FOUND', 'CONFLICT', 'UNAVAILABLE'),
  },
});

export function registerAcquireLease(app: OpenAPIHono<AppEnv>): void {
  app.openapi(acquireLeaseRoute, async (c) => {
    const { caller, side } = useCases(c);
    const body = c.req.valid('json');
    const lease = await side.leases.acquire(caller, {
      // Validated by the route's schema; a `__proto__` label key (which zod's record output would drop)
      // never gets this far: the strict JSON body parser refuses it, naming the key.
      selector: body.selector,
      ...(body.ttlSeconds === undefined ? {} : { ttlSeconds: body.ttlSeconds }),
      ...(body.waitSeconds === undefined ? {} : { waitSeconds: body.waitSeconds }),
      ...(body.keepApps ? { keepApps: true } : {}),
      ...(body.waiterId === undefined ? {} : { waiterId: body.waiterId }),
      signal: c.req.raw.signal,
      ...quotaOf(c.get('services').auth.quotaOf(caller.tenant)),
    });
    return c.json(view(lease), 201);
  });
}

/** The lease quota of a tenant as the lease use case takes it (none without tokens). */
function quotaOf(quota: TenantQuota | undefined): { quota?: { leases: number; waiters: number } } {
  return quota === undefined ? {} : { quota: { leases: quota.leases, waiters: quota.waiters } };
}
