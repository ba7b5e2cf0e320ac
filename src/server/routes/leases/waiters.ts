import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, SECURED_ERRORS, WaiterListSchema } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { useCases } from './common.ts';

export const listWaitersRoute = createRoute({
  method: 'get',
  path: '/v1/waiters',
  operationId: 'listWaiters',
  tags: ['leases'],
  summary:
    "Lease requests waiting for a device, with their place in their selector's queue (caller's tenant; admins: all)",
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client' }),
  responses: {
    200: {
      description: 'waiters, by queue and place',
      content: { 'application/json': { schema: WaiterListSchema } },
    },
    ...errorResponses(SECURED_ERRORS, 'UNAVAILABLE'),
  },
});

export function registerListWaiters(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listWaitersRoute, async (c) => {
    const { caller, side } = useCases(c);
    return c.json({ waiters: await side.leases.waiters(caller) }, 200);
  });
}
