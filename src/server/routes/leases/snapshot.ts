import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { BridgeError } from '../../../errors.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { errorResponses } from '../../schemas.ts';
import {
  CaptureFields,
  DeadlineField,
  LeaseIdParam,
  SMALL_BODY_BYTES,
  scopeFor,
  TransportField,
} from './common.ts';

const SnapshotBody = z
  .object({
    format: z.enum(['json', 'xml']).default('json'),
    transport: TransportField,
    deadlineMs: DeadlineField,
    ...CaptureFields,
  })
  .strict()
  .openapi('SnapshotRequest');

export const snapshotRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/snapshot',
  summary: 'Capture a UI snapshot (normalized JSON or raw uiautomator XML) through the session or one-shot',
  security: [{ bearer: [] }],
  middleware: guard({
    access: 'client',
    body: jsonBody(SMALL_BODY_BYTES),
    forward: true,
    expensive: true,
  }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: SnapshotBody } }, required: false },
  },
  responses: {
    200: {
      description: 'the snapshot',
      content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
    },
    ...errorResponses(400, 401, 403, 404, 410, 413, 415, 502, 503, 504),
  },
});

export function registerSnapshot(app: OpenAPIHono<AppEnv>): void {
  app.openapi(snapshotRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const raw = await c.req.json().catch(() => ({}));
    const parsed = SnapshotBody.safeParse(raw);
    if (!parsed.success) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `invalid snapshot request: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`,
      );
    }
    const { format, transport, deadlineMs, ...capture } = parsed.data;
    const view = await side.helpers.snapshot(scope, {
      format,
      transport,
      capture,
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    });
    return c.json(view as never, 200);
  });
}
