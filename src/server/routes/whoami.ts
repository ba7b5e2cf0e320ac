import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { EDGE_ERRORS, errorResponses, WhoamiSchema } from '../../api/index.ts';
import { capabilitiesOf } from '../../auth/tokens.ts';
import type { AppEnv } from '../env.ts';
import { assertRole } from '../middleware/auth.ts';
import { guard } from '../middleware/guard.ts';

export const whoamiRoute = createRoute({
  method: 'get',
  path: '/v1/whoami',
  operationId: 'whoami',
  tags: ['auth'],
  summary: 'Who the caller is and what its token may do (name, tenant, role, capabilities)',
  description:
    'Any client or admin token, of any tenant. Admins hold every capability. With no tokens configured, a ' +
    'loopback caller is the implicit admin (`loopback`, tenant `local`).',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client' }),
  responses: {
    200: {
      description: 'the caller',
      content: { 'application/json': { schema: WhoamiSchema } },
    },
    // Every role may call it: a caller is refused only for who it is not (401) or for its rate.
    ...errorResponses(EDGE_ERRORS),
  },
});

export function registerWhoami(app: OpenAPIHono<AppEnv>): void {
  app.openapi(whoamiRoute, (c) => {
    const caller = assertRole(c.get('principal'), 'client');
    return c.json(
      {
        name: caller.name,
        tenant: caller.tenant,
        role: caller.role,
        capabilities: capabilitiesOf(caller),
      },
      200,
    );
  });
}
