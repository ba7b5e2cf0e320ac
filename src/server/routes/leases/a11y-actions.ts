import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { A11yActionBodySchema, A11yActionResponseSchema, LeaseIdParam } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { scopeFor } from './common.ts';
import { GLASS_TAG, glassBodyErrors, glassBodyGuard } from './glass-common.ts';

export const a11yActionRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/a11y/actions',
  operationId: 'performAccessibilityAction',
  tags: [GLASS_TAG],
  summary:
    'set_text or click on a node of the tree last served to this lease: set_text through the glass a11y service; click taps the centre of the node by default (ACTION_CLICK does nothing on Compose), ACTION_CLICK with "via": "accessibility"',
  security: [{ bearer: [] }],
  middleware: glassBodyGuard(),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: A11yActionBodySchema } }, required: true },
  },
  responses: {
    200: { description: 'done', content: { 'application/json': { schema: A11yActionResponseSchema } } },
    ...glassBodyErrors(),
  },
});

export function registerA11yAction(app: OpenAPIHono<AppEnv>): void {
  app.openapi(a11yActionRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const { ref, action, text, via } = c.req.valid('json');
    return c.json(
      await side.glass.a11yAction(scope, {
        ref,
        action,
        ...(text === undefined ? {} : { text }),
        ...(via === undefined ? {} : { via }),
      }),
      200,
    );
  });
}
