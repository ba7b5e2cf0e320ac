import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  errorResponses,
  LEASE_ERRORS,
  LeaseAppListSchema,
  LeaseIdParam,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { scopeFor } from './common.ts';

export const listAppsRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/apps',
  operationId: 'listApps',
  tags: ['farm'],
  summary: 'The apps installed during the lease',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', forward: true }),
  request: { params: z.object({ id: LeaseIdParam }) },
  responses: {
    200: { description: 'the apps', content: { 'application/json': { schema: LeaseAppListSchema } } },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS),
  },
});

export function registerListApps(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listAppsRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    return c.json({ apps: await side.room.farm.apps(side.scopes.local(scope)) }, 200);
  });
}
