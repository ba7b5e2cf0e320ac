import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { A11yTreeQuerySchema, A11yTreeResponseSchema, LeaseIdParam } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { scopeFor } from './common.ts';
import { GLASS_TAG, glassErrors, glassGuard } from './glass-common.ts';

export const a11yTreeRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/a11y/tree',
  operationId: 'getAccessibilityTree',
  tags: [GLASS_TAG],
  summary:
    "The active window's accessibility tree (through the glass a11y service, installed and enabled on first use)",
  security: [{ bearer: [] }],
  middleware: glassGuard(),
  request: { params: z.object({ id: LeaseIdParam }), query: A11yTreeQuerySchema },
  responses: {
    200: {
      description: 'the tree: normalized (refs e1, e2, …) or raw',
      content: { 'application/json': { schema: A11yTreeResponseSchema } },
    },
    ...glassErrors(),
  },
});

export function registerA11yTree(app: OpenAPIHono<AppEnv>): void {
  app.openapi(a11yTreeRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const query = c.req.valid('query');
    const tree = await side.glass.a11yTree(scope, {
      format: query.format,
      ...(query.package === undefined ? {} : { package: query.package }),
    });
    return c.json(tree, 200);
  });
}
