import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  BODY_ERRORS,
  errorResponses,
  HELPER_ERRORS,
  LEASE_ERRORS,
  LeaseIdParam,
  SECURED_ERRORS,
  SnapshotBodySchema,
  SnapshotResponseSchema,
} from '../../../api/index.ts';
import { BridgeError } from '../../../errors.ts';
import { normalizeSnapshot } from '../../../snapshot/normalize.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { leaseFor, ref, SMALL_BODY_BYTES } from './common.ts';

export const snapshotRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/snapshot',
  operationId: 'captureSnapshot',
  tags: ['helper operations'],
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
    body: { content: { 'application/json': { schema: SnapshotBodySchema } }, required: false },
  },
  responses: {
    200: {
      description: 'the snapshot: normalized JSON (`format: json`) or the raw XML (`format: xml`)',
      content: { 'application/json': { schema: SnapshotResponseSchema } },
    },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, HELPER_ERRORS),
  },
});

export function registerSnapshot(app: OpenAPIHono<AppEnv>): void {
  app.openapi(snapshotRoute, async (c) => {
    const lease = await leaseFor(c, c.req.valid('param').id);
    const raw = await c.req.json().catch(() => ({}));
    const parsed = SnapshotBodySchema.safeParse(raw);
    if (!parsed.success) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `invalid snapshot request: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`,
      );
    }
    const { format, transport, deadlineMs, ...capture } = parsed.data;
    const s = await c.var.services.operations!.snapshot(ref(lease), {
      transport,
      capture,
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    });
    c.var.services.metrics.snapshotSeconds.observe({ transport: s.transport }, s.elapsedMs / 1000);
    const common = {
      transport: s.transport,
      ...(s.fallback ? { fallback: s.fallback } : {}),
      elapsedMs: s.elapsedMs,
      deadlineMs: s.deadlineMs,
      attempts: s.attempts,
      helperElapsedMs: s.result.elapsedMs ?? null,
      waitForIdleTimeoutMs: s.result.waitForIdleTimeoutMs ?? capture.waitForIdleTimeoutMs ?? null,
      nodeCount: s.result.nodeCount ?? null,
      truncated: s.result.truncated ?? null,
      windowCount: s.result.windowCount ?? null,
      captureMode: s.result.captureMode ?? null,
    };
    if (format === 'xml') return c.json({ ...common, format: 'xml', xml: s.xml }, 200);
    return c.json({ ...common, format: 'json', snapshot: normalizeSnapshot(s.xml) }, 200);
  });
}
