import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  errorResponses,
  HELPER_ERRORS,
  LEASE_ERRORS,
  LeaseIdParam,
  SECURED_ERRORS,
  ViewportQuerySchema,
  ViewportResponseSchema,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { scopeFor } from './common.ts';

export const viewportRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/viewport',
  operationId: 'getViewport',
  tags: ['helper operations'],
  summary: 'The interactive-window viewport',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', forward: true }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    query: ViewportQuerySchema,
  },
  responses: {
    200: { description: 'viewport', content: { 'application/json': { schema: ViewportResponseSchema } } },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS, HELPER_ERRORS),
  },
});

export function registerViewport(app: OpenAPIHono<AppEnv>): void {
  app.openapi(viewportRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const query = c.req.valid('query');
    const view = await side.helpers.viewport(scope, {
      transport: query.transport ?? 'auto',
      ...(query.deadlineMs === undefined ? {} : { deadlineMs: query.deadlineMs }),
    });
    return c.json(view, 200);
  });
}
