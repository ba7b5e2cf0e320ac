import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  ReleaseLeaseResponseSchema,
  SECURED_ERRORS,
  TEARDOWN_RECORDS_PATH,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { fencingTokenOf, logLease, useCases, view } from './common.ts';

export const releaseLeaseRoute = createRoute({
  method: 'delete',
  path: '/v1/leases/{id}',
  operationId: 'releaseLease',
  tags: ['leases'],
  summary:
    'Release the lease: tear down helper sessions, forwards and changed settings (on the node that drives the device)',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', forward: 'or-here' }),
  request: { params: z.object({ id: LeaseIdParam }) },
  responses: {
    200: {
      description:
        'released, with the teardown record; or, when the teardown did not end within ' +
        '`DEVICEBRIDGE_RELEASE_WAIT_MS`, `teardown: null` and `teardownPending` (the record follows in GET /v1/teardowns)',
      content: { 'application/json': { schema: ReleaseLeaseResponseSchema } },
    },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS),
  },
});

export function registerReleaseLease(app: OpenAPIHono<AppEnv>): void {
  app.openapi(releaseLeaseRoute, async (c) => {
    const { caller, side } = useCases(c);
    const result = await side.leases.release(caller, c.req.valid('param').id, fencingTokenOf(c), {
      afterLostAnswer: c.get('ownerUnreachable') === true,
    });
    logLease(c, result.lease);
    return c.json(
      {
        lease: view(result.lease),
        teardown: result.teardown,
        ...(result.teardownPending === undefined
          ? {}
          : {
              teardownPending: {
                waitedMs: Math.round(result.teardownPending.waitedMs),
                records: TEARDOWN_RECORDS_PATH,
              },
            }),
      },
      200,
    );
  });
}
