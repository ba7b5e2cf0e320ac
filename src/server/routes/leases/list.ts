import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import { LeaseSchema, useCases, view } from './common.ts';

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
    const { caller, side } = useCases(c);
    const leases = await side.leases.list(caller);
    return c.json({ leases: leases.map(view) }, 200);
  });
}
