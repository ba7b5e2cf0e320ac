import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ClipboardSetBodySchema, GlassDoneSchema, LeaseIdParam } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { scopeFor } from './common.ts';
import { GLASS_TAG, glassBodyErrors, glassBodyGuard } from './glass-common.ts';

export const setClipboardRoute = createRoute({
  method: 'put',
  path: '/v1/leases/{id}/clipboard',
  operationId: 'setClipboard',
  tags: [GLASS_TAG],
  summary: "Set the device's clipboard text (through the lease's glass agent)",
  security: [{ bearer: [] }],
  middleware: glassBodyGuard(),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: ClipboardSetBodySchema } }, required: true },
  },
  responses: {
    200: { description: 'set', content: { 'application/json': { schema: GlassDoneSchema } } },
    ...glassBodyErrors(),
  },
});

export function registerSetClipboard(app: OpenAPIHono<AppEnv>): void {
  app.openapi(setClipboardRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    return c.json(await side.glass.clipboardSet(scope, c.req.valid('json').text), 200);
  });
}
