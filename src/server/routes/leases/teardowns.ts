import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import {
  errorResponses,
  SECURED_ERRORS,
  TeardownListQuerySchema,
  TeardownListSchema,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { useCases, view } from './common.ts';

export const listTeardownsRoute = createRoute({
  method: 'get',
  path: '/v1/teardowns',
  operationId: 'listTeardowns',
  tags: ['leases'],
  summary: "Ended leases with their teardown records, newest first: the caller's tenant (admins: all)",
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client' }),
  request: { query: TeardownListQuerySchema },
  responses: {
    200: {
      description: 'ended leases and what their teardown did',
      content: { 'application/json': { schema: TeardownListSchema } },
    },
    ...errorResponses(SECURED_ERRORS, 'INVALID_ARGUMENT', 'UNAVAILABLE'),
  },
});

export function registerListTeardowns(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listTeardownsRoute, async (c) => {
    const { caller, side } = useCases(c);
    const ended = await side.leases.teardowns(caller, c.req.valid('query').limit);
    return c.json({ teardowns: ended.map((e) => ({ lease: view(e.lease), teardown: e.teardown })) }, 200);
  });
}
