import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { GlassDoneSchema, LeaseIdParam, PointerBodySchema } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { scopeFor } from './common.ts';
import { GLASS_TAG, glassBodyErrors, glassBodyGuard } from './glass-common.ts';

export const pointerRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/pointer',
  operationId: 'injectPointer',
  tags: [GLASS_TAG],
  summary: 'Inject a pointer gesture: points {x, y, t_ms} as real MotionEvents (through the glass agent)',
  security: [{ bearer: [] }],
  middleware: glassBodyGuard(),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: PointerBodySchema } }, required: true },
  },
  responses: {
    200: { description: 'injected', content: { 'application/json': { schema: GlassDoneSchema } } },
    ...glassBodyErrors(),
  },
});

export function registerPointer(app: OpenAPIHono<AppEnv>): void {
  app.openapi(pointerRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const { gesture, button } = c.req.valid('json');
    return c.json(await side.glass.pointer(scope, gesture, button), 200);
  });
}
