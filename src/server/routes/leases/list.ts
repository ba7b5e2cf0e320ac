import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, LeaseListSchema, SECURED_ERRORS } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { assertRole } from '../../middleware/auth.ts';
import { guard } from '../../middleware/guard.ts';
import { requireDevices } from '../devices.ts';
import { view } from './common.ts';

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
    const principal = assertRole(c.get('principal'), 'client');
    requireDevices(c.var.services);
    const leases = await c.var.services.leases!.list(
      principal.role === 'admin' ? {} : { tenant: principal.tenant },
    );
    return c.json({ leases: leases.map(view) }, 200);
  });
}
