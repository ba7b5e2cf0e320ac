import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import {
  AcquireLeaseBodySchema,
  BODY_ERRORS,
  errorResponses,
  LeaseSchema,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { assertRole } from '../../middleware/auth.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { requireDevices } from '../devices.ts';
import { SMALL_BODY_BYTES, view } from './common.ts';

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
    const principal = assertRole(c.get('principal'), 'client');
    requireDevices(c.var.services);
    const body = c.req.valid('json');
    const lease = await c.var.services.leases!.acquire({
      // The raw selector: the route schema documents it, the manager validates it (zod's record
      // output would drop a `__proto__` label key).
      selector: ((await c.req.json()) as { selector?: unknown }).selector ?? {},
      ...(body.ttlSeconds === undefined ? {} : { ttlSeconds: body.ttlSeconds }),
      ...(body.waitSeconds === undefined ? {} : { waitSeconds: body.waitSeconds }),
      tenant: principal.tenant,
      holder: principal.name,
      signal: c.req.raw.signal,
    });
    c.var.logger.info({ leaseId: lease.id, deviceId: lease.deviceId }, 'lease acquired');
    return c.json(view(lease), 201);
  });
}
