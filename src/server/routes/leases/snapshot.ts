import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context, TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import {
  BODY_ERRORS,
  errorResponses,
  HELPER_ERRORS,
  LEASE_ERRORS,
  LeaseIdParam,
  SECURED_ERRORS,
  SnapshotBodySchema,
  type SnapshotResponse,
  SnapshotResponseSchema,
} from '../../../api/index.ts';
import type { SnapshotView } from '../../../app/index.ts';
import { snapshotAnswer } from '../../../snapshot/json-writer.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { SMALL_BODY_BYTES, scopeFor } from './common.ts';

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

/**
 * The answer `c.json(view, 200)` would give, the same bytes and the same type, written by the snapshot
 * JSON writer: one Buffer (with its Content-Length), or for a large answer a stream of pieces written
 * as the response pulls them (bounded memory).
 */
function snapshotJson(
  c: Context<AppEnv>,
  view: SnapshotView,
): Response & TypedResponse<JSONParsed<SnapshotResponse>, 200, 'json'> {
  const bytes = snapshotAnswer(view, c.get('services').snapshotAnswer);
  const answer = c.newResponse(bytes, 200, { 'content-type': 'application/json' });
  // The bytes are JSON.stringify(view)'s (the writer's property tests hold it to that), and a
  // SnapshotView is a SnapshotResponse: what c.json would declare.
  return answer as Response & TypedResponse<JSONParsed<SnapshotResponse>, 200, 'json'>;
}

export function registerSnapshot(app: OpenAPIHono<AppEnv>): void {
  app.openapi(snapshotRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    // A JSON body was parsed once by the route's validator (defaults applied, a bad field is its 400);
    // a call without a body gets an unparsed `{}` from it, here given the defaults.
    const body = c.req.valid('json');
    const { format, transport, deadlineMs, ...capture } =
      Object.keys(body).length === 0 ? SnapshotBodySchema.parse({}) : body;
    const view = await side.helpers.snapshot(scope, {
      format,
      transport,
      capture,
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    });
    return snapshotJson(c, view);
  });
}
