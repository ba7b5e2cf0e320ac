import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { assertRole } from '../../middleware/auth.ts';
import { guard } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import { requireDevices } from '../devices.ts';
import { LeaseSchema, view } from './common.ts';

export const listLeasesRoute = createRoute({
  method: 'get',
  path: '/v1/leases',
  summary: "Active leases of the caller's tenant (admins: all)",
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client' }),
  responses: {
    200: {
      description: 'leases',
      content: { 'application/json': { schema: z.object({ leases: z.array(LeaseSchema) }) } },
    },
    ...errorResponses(401, 403, 503),
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
