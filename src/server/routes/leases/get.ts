import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import { fencingTokenOf, LeaseIdParam, leaseResponses, logLease, useCases, view } from './common.ts';

export const getLeaseRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}',
  summary: 'One lease (404 for other tenants)',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client' }),
  request: { params: z.object({ id: LeaseIdParam }) },
  responses: { ...leaseResponses(200, 'the lease'), ...errorResponses(400, 401, 403, 404, 503) },
});

export function registerGetLease(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getLeaseRoute, async (c) => {
    const { caller, side } = useCases(c);
    const lease = await side.leases.get(caller, c.req.valid('param').id, fencingTokenOf(c));
    logLease(c, lease);
    return c.json(view(lease), 200);
  });
}
