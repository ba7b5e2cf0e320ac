import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { GlassDoneSchema, LeaseIdParam, TextBodySchema } from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { scopeFor } from './common.ts';
import { GLASS_TAG, glassBodyErrors, glassBodyGuard } from './glass-common.ts';

export const typeTextRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/text',
  operationId: 'typeText',
  tags: [GLASS_TAG],
  summary: 'Type text into the focused field, faithful Unicode (through the glass agent)',
  security: [{ bearer: [] }],
  middleware: glassBodyGuard(),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: TextBodySchema } }, required: true },
  },
  responses: {
    200: { description: 'typed', content: { 'application/json': { schema: GlassDoneSchema } } },
    ...glassBodyErrors(),
  },
});

export function registerTypeText(app: OpenAPIHono<AppEnv>): void {
  app.openapi(typeTextRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    return c.json(await side.glass.text(scope, c.req.valid('json').text), 200);
  });
}
