import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  ReleaseLeaseResponseSchema,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { leaseFor, view } from './common.ts';

export const releaseLeaseRoute = createRoute({
  method: 'delete',
  path: '/v1/leases/{id}',
  operationId: 'releaseLease',
  tags: ['leases'],
  summary: 'Release the lease: tear down helper sessions, forwards and changed settings',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client' }),
  request: { params: z.object({ id: LeaseIdParam }) },
  responses: {
    200: {
      description: 'released, with the teardown record',
      content: { 'application/json': { schema: ReleaseLeaseResponseSchema } },
    },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS),
  },
});

export function registerReleaseLease(app: OpenAPIHono<AppEnv>): void {
  app.openapi(releaseLeaseRoute, async (c) => {
    const lease = await leaseFor(c, c.req.valid('param').id);
    const result = await c.var.services.leases!.release(lease.id, lease.fencingToken);
    c.var.logger.info({ failures: result.teardown.failures.length }, 'lease released');
    return c.json({ lease: view(result.lease), teardown: result.teardown }, 200);
  });
}
