import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import { leaseResponses, Selector, SMALL_BODY_BYTES, useCases, view } from './common.ts';

const AcquireBody = z
  .object({
    selector: Selector.default({}),
    ttlSeconds: z.number().int().optional().openapi({ description: 'default 300, max 3600' }),
    waitSeconds: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'wait in a FIFO queue per selector (default 0)' }),
  })
  .strict()
  .openapi('AcquireLease');

export const acquireLeaseRoute = createRoute({
  method: 'post',
  path: '/v1/leases',
  summary: 'Lease one device matching the selector, waiting up to waitSeconds in a FIFO queue',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES) }),
  request: { body: { content: { 'application/json': { schema: AcquireBody } }, required: true } },
  responses: {
    ...leaseResponses(201, 'leased'),
    ...errorResponses(400, 401, 403, 404, 409, 413, 415, 503),
  },
});

export function registerAcquireLease(app: OpenAPIHono<AppEnv>): void {
  app.openapi(acquireLeaseRoute, async (c) => {
    const { caller, side } = useCases(c);
    const body = c.req.valid('json');
    const lease = await side.leases.acquire(caller, {
      // The raw selector: the route schema documents it, the manager validates it with the same
      // schema (zod's record output would drop a `__proto__` label key; the manager keeps it).
      selector: ((await c.req.json()) as { selector?: unknown }).selector ?? {},
      ...(body.ttlSeconds === undefined ? {} : { ttlSeconds: body.ttlSeconds }),
      ...(body.waitSeconds === undefined ? {} : { waitSeconds: body.waitSeconds }),
      signal: c.req.raw.signal,
    });
    c.var.logger.info({ leaseId: lease.id, deviceId: lease.deviceId }, 'lease acquired');
    return c.json(view(lease), 201);
  });
}
