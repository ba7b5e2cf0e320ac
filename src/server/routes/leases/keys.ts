import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { GlassDoneSchema, KeysBodySchema, LeaseIdParam } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { scopeFor } from './common.ts';
import { GLASS_TAG, glassBodyErrors, glassBodyGuard } from './glass-common.ts';

export const pressKeysRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/keys',
  operationId: 'pressKeys',
  tags: [GLASS_TAG],
  summary: 'Press a key chord such as ctrl+a, shift+tab, enter (through the glass agent)',
  security: [{ bearer: [] }],
  middleware: glassBodyGuard(),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: KeysBodySchema } }, required: true },
  },
  responses: {
    200: { description: 'pressed', content: { 'application/json': { schema: GlassDoneSchema } } },
    ...glassBodyErrors(),
  },
});

export function registerPressKeys(app: OpenAPIHono<AppEnv>): void {
  app.openapi(pressKeysRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    return c.json(await side.glass.key(scope, c.req.valid('json').chord), 200);
  });
}
