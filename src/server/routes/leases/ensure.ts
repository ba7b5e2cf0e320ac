import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { errorResponses, HelperNameParam } from '../../schemas.ts';
import { LeaseIdParam, SMALL_BODY_BYTES, scopeFor } from './common.ts';

export const ensureHelperRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/helpers/{name}/ensure',
  summary: 'Install the helper if missing, outdated or mismatched',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES), forward: true }),
  request: {
    params: z.object({ id: LeaseIdParam, name: HelperNameParam }),
    body: {
      content: {
        'application/json': {
          schema: z
            .object({ policy: z.enum(['missing-or-outdated', 'always', 'never']).optional() })
            .strict(),
        },
      },
      required: false,
    },
  },
  responses: {
    200: {
      description: 'what ensure found and did',
      content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
    },
    ...errorResponses(400, 401, 403, 404, 410, 413, 415, 502, 503, 504),
  },
});

export function registerEnsureHelper(app: OpenAPIHono<AppEnv>): void {
  app.openapi(ensureHelperRoute, async (c) => {
    const { id, name } = c.req.valid('param');
    const { side, scope } = await scopeFor(c, id);
    const body = (await c.req.json().catch(() => ({}))) as {
      policy?: 'missing-or-outdated' | 'always' | 'never';
    };
    const result = await side.helpers.ensure(scope, name, body.policy);
    return c.json(result as unknown as Record<string, unknown>, 200);
  });
}
