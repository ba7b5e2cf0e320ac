import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import { LeaseIdParam, leaseFor, leaseResponses, view } from './common.ts';

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
  app.openapi(getLeaseRoute, async (c) =>
    c.json(view(await leaseFor(c, c.req.valid('param').id, { active: false })), 200),
  );
}
