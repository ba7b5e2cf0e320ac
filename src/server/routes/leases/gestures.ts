import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { GestureSpec } from '../../../helpers/protocol/gestures.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import { DeadlineField, GESTURE_BODY_BYTES, LeaseIdParam, scopeFor, TransportField } from './common.ts';

const Point = z.object({ x: z.number(), y: z.number() });
const GestureBody = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('tap'), x: z.number(), y: z.number() }).strict(),
    z
      .object({
        kind: z.literal('long-press'),
        x: z.number(),
        y: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z
      .object({ kind: z.literal('swipe'), from: Point, to: Point, durationMs: z.number().int().optional() })
      .strict(),
    z
      .object({ kind: z.literal('drag'), from: Point, to: Point, durationMs: z.number().int().optional() })
      .strict(),
    z
      .object({
        kind: z.literal('pinch'),
        center: Point,
        startDistance: z.number(),
        endDistance: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z
      .object({
        kind: z.literal('rotate'),
        center: Point,
        radius: z.number(),
        startAngle: z.number(),
        endAngle: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z.object({ kind: z.literal('plan'), plan: z.unknown() }).strict(),
  ])
  .and(z.object({ transport: TransportField.optional(), deadlineMs: DeadlineField }))
  .openapi('GestureRequest');

export const gestureRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/gestures',
  summary:
    'Inject a gesture: tap, long-press, swipe, drag, pinch, rotate, or a raw android-touch-plan-v1 plan',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(GESTURE_BODY_BYTES), forward: true }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: GestureBody } }, required: true },
  },
  responses: {
    200: {
      description: 'injected',
      content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
    },
    ...errorResponses(400, 401, 403, 404, 410, 413, 415, 502, 503, 504),
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
    return c.json(view as Record<string, unknown>, 200);
  });
}
