import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  BODY_ERRORS,
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  LeaseSchema,
  RenewLeaseBodySchema,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { fencingTokenOf, logLease, SMALL_BODY_BYTES, useCases, view } from './common.ts';

export const renewLeaseRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/renew',
  operationId: 'renewLease',
  tags: ['leases'],
  summary: 'Extend the lease to now + ttlSeconds',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES) }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: RenewLeaseBodySchema } }, required: false },
  },
  responses: {
    200: { description: 'renewed', content: { 'application/json': { schema: LeaseSchema } } },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS),
  },
});

export function registerRenewLease(app: OpenAPIHono<AppEnv>): void {
  app.openapi(renewLeaseRoute, async (c) => {
    const { caller, side } = useCases(c);
    const body = c.req.valid('json');
    const renewed = await side.leases.renew(caller, c.req.valid('param').id, {
      ...(body.ttlSeconds === undefined ? {} : { ttlSeconds: body.ttlSeconds }),
      fencingToken: fencingTokenOf(c),
    });
    logLease(c, renewed);
    return c.json(view(renewed), 200);
  });
}
