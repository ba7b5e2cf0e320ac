import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  BODY_ERRORS,
  EnsureBodySchema,
  EnsureResultSchema,
  errorResponses,
  HELPER_ERRORS,
  HelperNameParam,
  LEASE_ERRORS,
  LeaseIdParam,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { SMALL_BODY_BYTES, scopeFor } from './common.ts';

export const ensureHelperRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/helpers/{name}/ensure',
  operationId: 'ensureHelper',
  tags: ['helper operations'],
  summary: 'Install the helper if missing, outdated or mismatched',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES), forward: true }),
  request: {
    params: z.object({ id: LeaseIdParam, name: HelperNameParam }),
    body: { content: { 'application/json': { schema: EnsureBodySchema } }, required: false },
  },
  responses: {
    200: {
      description: 'what ensure found and did',
      content: { 'application/json': { schema: EnsureResultSchema } },
    },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, HELPER_ERRORS),
  },
});

export function registerEnsureHelper(app: OpenAPIHono<AppEnv>): void {
  app.openapi(ensureHelperRoute, async (c) => {
    const { id, name } = c.req.valid('param');
    const { side, scope } = await scopeFor(c, id);
    const result = await side.helpers.ensure(scope, name, c.req.valid('json').policy);
    return c.json(result, 200);
  });
}
