import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ClipboardSchema, LeaseIdParam } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { scopeFor } from './common.ts';
import { GLASS_TAG, glassErrors, glassGuard } from './glass-common.ts';

export const getClipboardRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/clipboard',
  operationId: 'getClipboard',
  tags: [GLASS_TAG],
  summary: "The device's clipboard text (through the lease's glass agent)",
  security: [{ bearer: [] }],
  middleware: glassGuard(),
  request: { params: z.object({ id: LeaseIdParam }) },
  responses: {
    200: { description: 'the clipboard', content: { 'application/json': { schema: ClipboardSchema } } },
    ...glassErrors(),
  },
});

export function registerGetClipboard(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getClipboardRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    return c.json(await side.glass.clipboardGet(scope), 200);
  });
}
