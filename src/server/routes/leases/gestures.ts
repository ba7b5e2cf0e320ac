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
import { type GestureSpec, planForGesture } from '../../../helpers/protocol/gestures.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { GESTURE_BODY_BYTES, leaseFor, ref } from './common.ts';

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
    const lease = await leaseFor(c, c.req.valid('param').id);
    const body = c.req.valid('json');
    const { transport, deadlineMs, ...spec } = body;
    const plan = planForGesture(spec as GestureSpec);
    const g = await c.var.services.operations!.gesture(ref(lease), plan, {
      transport: transport ?? 'auto',
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    });
    const { elapsedMs: helperElapsedMs, ...result } = g.result;
    return c.json(
      {
        ...result,
        transport: g.transport,
        elapsedMs: g.elapsedMs,
        deadlineMs: g.deadlineMs,
        attempts: g.attempts,
        helperElapsedMs: helperElapsedMs ?? null,
      },
      200,
    );
  });
}
