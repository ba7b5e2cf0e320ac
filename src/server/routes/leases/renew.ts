import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import {
  fencingTokenOf,
  LeaseIdParam,
  leaseResponses,
  logLease,
  SMALL_BODY_BYTES,
  useCases,
  view,
} from './common.ts';

export const renewLeaseRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/renew',
  summary: 'Extend the lease to now + ttlSeconds',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES) }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: {
      content: {
        'application/json': { schema: z.object({ ttlSeconds: z.number().int().optional() }).strict() },
      },
      required: false,
    },
  },
  responses: {
    ...leaseResponses(200, 'renewed'),
    ...errorResponses(400, 401, 403, 404, 409, 410, 413, 415, 503),
  },
});

export function registerRenewLease(app: OpenAPIHono<AppEnv>): void {
  app.openapi(renewLeaseRoute, async (c) => {
    const { caller, side } = useCases(c);
    const body = (await c.req.json().catch(() => ({}))) as { ttlSeconds?: number };
    const renewed = await side.leases.renew(caller, c.req.valid('param').id, {
      ...(body.ttlSeconds === undefined ? {} : { ttlSeconds: body.ttlSeconds }),
      fencingToken: fencingTokenOf(c),
    });
    logLease(c, renewed);
    return c.json(view(renewed), 200);
  });
}
