import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, LeaseListSchema, SECURED_ERRORS } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { useCases, view } from './common.ts';

export const listLeasesRoute = createRoute({
  method: 'get',
  path: '/v1/leases',
  operationId: 'listLeases',
  tags: ['leases'],
  summary: "Active leases of the caller's tenant (admins: all)",
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client' }),
  responses: {
    200: {
      description: 'leases',
      content: { 'application/json': { schema: LeaseListSchema } },
    },
    ...errorResponses(SECURED_ERRORS, 'UNAVAILABLE'),
  },
});

export function registerListLeases(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listLeasesRoute, async (c) => {
    const { caller, side } = useCases(c);
    const leases = await side.leases.list(caller);
    return c.json({ leases: leases.map(view) }, 200);
  });
}
