import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  LogcatQuerySchema,
  LogEntrySchema,
  NDJSON_MEDIA_TYPE,
  ndjsonContent,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { scopeFor } from './common.ts';

export const logcatRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/logcat',
  operationId: 'streamLogcat',
  tags: ['farm'],
  summary: "Stream the leased device's logcat as NDJSON (one LogEntry per line) until the lease ends",
  description:
    'The whole log buffer, then new entries as they come, filtered by level, tag, pid and since. ' +
    "Pulled at the reader's pace: a slow reader holds the device back; the bridge buffers one entry.",
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', forward: 'stream' }),
  request: { params: z.object({ id: LeaseIdParam }), query: LogcatQuerySchema },
  responses: {
    200: {
      description: 'one JSON LogEntry per line',
      content: ndjsonContent(LogEntrySchema),
    },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS, ['DEVICE_OFFLINE', 'UNAUTHORIZED_DEVICE', 'TIMEOUT']),
  },
});

export function registerLogcat(app: OpenAPIHono<AppEnv>): void {
  app.openapi(logcatRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    // The query's given fields are the filter.
    const filter = Object.fromEntries(
      Object.entries(c.req.valid('query')).filter(([, v]) => v !== undefined),
    );
    const stream = await side.room.farm.logcat(side.scopes.local(scope), filter);
    return c.body(stream, 200, { 'Content-Type': NDJSON_MEDIA_TYPE });
  });
}
