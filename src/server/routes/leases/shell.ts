import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  BODY_ERRORS,
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  SECURED_ERRORS,
  ShellBodySchema,
  ShellResultSchema,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { scopeFor } from './common.ts';

/** An argv of SHELL_LIMITS.maxArgs arguments of maxArgBytes each, JSON-escaped, fits. */
const SHELL_BODY_BYTES = 2 * 1024 * 1024;

export const shellRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/shell',
  operationId: 'runShell',
  tags: ['farm'],
  summary: 'Run one shell command on the leased device (needs the `shell` token capability)',
  security: [{ bearer: [] }],
  middleware: guard({
    access: 'client',
    capability: 'shell',
    body: jsonBody(SHELL_BODY_BYTES),
    forward: true,
  }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: ShellBodySchema } }, required: true },
  },
  responses: {
    200: {
      description: 'the exit status and the (capped) output; a non-zero exit status is still 200',
      content: { 'application/json': { schema: ShellResultSchema } },
    },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, [
      'DEVICE_OFFLINE',
      'UNAUTHORIZED_DEVICE',
      'TIMEOUT',
    ]),
  },
});

export function registerShell(app: OpenAPIHono<AppEnv>): void {
  app.openapi(shellRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    return c.json(await side.farm.shell(scope, c.req.valid('json')), 200);
  });
}
