import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  LeaseSchema,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { fencingTokenOf, logLease, useCases, view } from './common.ts';

export const getLeaseRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}',
  operationId: 'getLease',
  tags: ['leases'],
  summary: 'One lease (404 for other tenants)',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client' }),
  request: { params: z.object({ id: LeaseIdParam }) },
  responses: {
    200: { description: 'the lease', content: { 'application/json': { schema: LeaseSchema } } },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS),
  },
});

export function registerGetLease(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getLeaseRoute, async (c) => {
    const { caller, side } = useCases(c);
    const lease = await side.leases.get(caller, c.req.valid('param').id, fencingTokenOf(c));
    logLease(c, lease);
    return c.json(view(lease), 200);
  });
}
