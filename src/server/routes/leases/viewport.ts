import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import { AttemptSchema, LeaseIdParam, MAX_DEADLINE_MS, scopeFor, TransportField } from './common.ts';

export const viewportRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/viewport',
  summary: 'The interactive-window viewport',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', forward: true }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    query: z.object({
      transport: TransportField.optional(),
      deadlineMs: z.coerce.number().int().min(1).max(MAX_DEADLINE_MS).optional(),
    }),
  },
  responses: {
    200: {
      description: 'viewport',
      content: {
        'application/json': {
          schema: z.object({
            transport: z.string(),
            x: z.number(),
            y: z.number(),
            width: z.number(),
            height: z.number(),
            elapsedMs: z.number(),
            deadlineMs: z.number(),
            attempts: z.array(AttemptSchema),
          }),
        },
      },
    },
    ...errorResponses(400, 401, 403, 404, 410, 413, 415, 502, 503, 504),
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
