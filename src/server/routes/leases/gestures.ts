import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  BODY_ERRORS,
  errorResponses,
  GestureBodySchema,
  GestureResponseSchema,
  HELPER_ERRORS,
  LEASE_ERRORS,
  LeaseIdParam,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { GestureSpec } from '../../../protocol/helper/gestures.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { GESTURE_BODY_BYTES, scopeFor } from './common.ts';

export const gestureRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/gestures',
  operationId: 'injectGesture',
  tags: ['helper operations'],
  summary:
    'Inject a gesture: tap, long-press, swipe, drag, pinch, rotate, or a raw android-touch-plan-v1 plan',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(GESTURE_BODY_BYTES), forward: true }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: GestureBodySchema } }, required: true },
  },
  responses: {
    200: {
      description: 'injected',
      content: { 'application/json': { schema: GestureResponseSchema } },
    },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, HELPER_ERRORS),
  },
});

export function registerGesture(app: OpenAPIHono<AppEnv>): void {
  app.openapi(gestureRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const { transport, deadlineMs, ...spec } = c.req.valid('json');
    const view = await side.helpers.gesture(scope, spec as GestureSpec, {
      transport: transport ?? 'auto',
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    });
    return c.json(view, 200);
  });
}
