import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import type { ShellRequest, ShellResponse, ShellStreamRequest } from '../../../api/farm.ts';
import {
  BODY_ERRORS,
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  NDJSON_MEDIA_TYPE,
  ndjsonContent,
  SECURED_ERRORS,
  SHELL_LIMITS,
  ShellBodySchema,
  ShellEventSchema,
  ShellResultSchema,
  ShellStreamBodySchema,
} from '../../../api/index.ts';
import type { ShellInput } from '../../../helpers/farm/shell.ts';
import type { AppEnv } from '../../env.ts';
import { jsonPieceStream } from '../../json-pieces.ts';
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
    expensive: true,
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

export const shellStreamRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/shell/stream',
  operationId: 'streamShell',
  tags: ['farm'],
  summary: 'Run one shell command, its output streamed as NDJSON events (needs the `shell` token capability)',
  description:
    '`{"stream":"stdout"|"stderr","data":BASE64}` per chunk as it comes, then one last event: ' +
    '`{"exit":CODE,"durationMs":MS}`, or `{"error":{code,message}}` (TIMEOUT past timeoutMs, LEASE_EXPIRED when ' +
    'the lease ends, DEVICE_OFFLINE). Pulled at the reader’s pace: a slow reader pauses the device’s output. ' +
    'A client that disconnects closes the command on the device.',
  security: [{ bearer: [] }],
  middleware: guard({
    access: 'client',
    capability: 'shell',
    body: jsonBody(SHELL_BODY_BYTES),
    forward: 'stream', // quiet for up to timeoutMs: no idle limit on the relayed body
    expensive: true,
  }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: ShellStreamBodySchema } }, required: true },
  },
  responses: {
    200: {
      description: 'one JSON ShellEvent per line; a non-zero exit status is still 200',
      content: ndjsonContent(ShellEventSchema),
    },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, [
      'DEVICE_OFFLINE',
      'UNAUTHORIZED_DEVICE',
      'TIMEOUT',
    ]),
  },
});

/** The command as the body gives it: an argv, or one command line. */
function shellInput(request: ShellRequest | ShellStreamRequest): ShellInput {
  return request.argv !== undefined ? { argv: request.argv } : { command: request.command ?? '' };
}

export function registerShell(app: OpenAPIHono<AppEnv>): void {
  app.openapi(shellRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const request = c.req.valid('json');
    const outcome = await side.room.farm.shell(
      side.scopes.local(scope),
      scope.lease.tenant,
      shellInput(request),
      {
        timeoutMs: request.timeoutMs ?? SHELL_LIMITS.defaultTimeoutMs,
        maxOutputBytes: request.maxOutputBytes ?? SHELL_LIMITS.defaultMaxOutputBytes,
      },
    );
    // A ShellResponse, its output decoded and written a piece at a time (json-pieces.ts): one
    // JSON.stringify of several MiB would hold the node's event loop (heartbeat, /readyz) meanwhile.
    const result: Record<keyof ShellResponse, Buffer | number | boolean | null> = {
      exitCode: outcome.exitCode,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      truncated: outcome.truncated,
      durationMs: Math.round(outcome.durationMs),
    };
    const answer = c.newResponse(jsonPieceStream(result), 200, { 'Content-Type': 'application/json' });
    // The bytes parse to the ShellResponse c.json would send (json-pieces.ts's property test).
    return answer as Response & TypedResponse<JSONParsed<ShellResponse>, 200, 'json'>;
  });
  app.openapi(shellStreamRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const request = c.req.valid('json');
    const stream = await side.room.farm.shellEvents(
      side.scopes.local(scope),
      scope.lease.tenant,
      shellInput(request),
      {
        timeoutMs: request.timeoutMs ?? SHELL_LIMITS.defaultTimeoutMs,
      },
    );
    return c.body(stream, 200, { 'Content-Type': NDJSON_MEDIA_TYPE });
  });
}
