/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP for AI agents (docs/mcp.md). The caller is
 * authenticated as for the API (a bearer token when tokens are configured; loopback only without);
 * each tool call then goes through the API itself, in process, with the caller's own Authorization,
 * so tenancy, roles, capabilities, rate limits and forwarding to the lease's node are the API's.
 *
 * A session lives on the node that opened it, and its id names that node: a request for it that
 * reaches another node of the fleet is forwarded there (POST, the GET event stream, DELETE; the
 * answer streamed back), like a lease-scoped call to the device's owner. A session whose node is no
 * longer in the node directory is gone: 404, the MCP answer for "start a new session".
 */
import { createRoute, type OpenAPIHono, type RouteConfig, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  errorResponses,
  McpErrorSchema,
  McpEventStreamSchema,
  McpMessageSchema,
  McpOrBridgeErrorSchema,
  McpProtocolVersionHeader,
  McpSessionIdHeader,
} from '../../api/index.ts';
import { DeviceBridgeClient } from '../../client/index.ts';
import { BridgeError } from '../../errors.ts';
import { jsonRpcError, type McpHttpSessions } from '../../mcp/http-sessions.ts';
import { nodeOfSessionId } from '../../mcp/session-id.ts';
import { readLimited, tooLarge } from '../body.ts';
import type { AppEnv } from '../env.ts';
import { parseJsonBody } from '../json-body.ts';
import { assertRole } from '../middleware/auth.ts';
import { forwardToNode, PROXIED_HEADER } from '../middleware/owner-proxy.ts';

/** Largest MCP message (a type_text or clipboard_set of 64 KiB of text fits many times). */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

/** The transport's own headers: sent on to a session's node, and relayed back from it. */
const MCP_REQUEST_HEADERS = ['mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
const MCP_ANSWER_HEADERS = ['mcp-session-id', 'mcp-protocol-version', 'cache-control', 'allow'];

/** A Response made outside the context (the transport's) carries none of its headers: add the request id. */
function withRequestId(c: Context<AppEnv>, answer: Response): Response {
  const headers = new Headers(answer.headers);
  headers.set('x-request-id', c.get('requestId'));
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
}

/**
 * The answer of the node that holds the session `id` when that is another live node; a 404 when
 * its node is gone; undefined when the session is this node's to answer (or names no node).
 */
async function onSessionNode(c: Context<AppEnv>, id: string | undefined): Promise<Response | undefined> {
  const side = c.get('services').deviceSide;
  const node = id === undefined ? null : nodeOfSessionId(id);
  if (side === undefined || node === null || node === side.node) return undefined;
  // Forwarded once already: the sender read the directory a moment ago; never forward again.
  if (c.req.header(PROXIED_HEADER) !== undefined) return undefined;
  const url = await side.nodes.urlOf(node);
  if (url === null) {
    const alive = (await side.nodes.alive([node])).has(node);
    // Its leases end by their TTL: only the session renewed them.
    return withRequestId(
      c,
      jsonRpcError(
        404,
        -32001,
        alive
          ? `this MCP session's node ${node} has no URL in the node directory: initialize a new session`
          : `this MCP session's node ${node} is gone (not in the node directory): initialize a new session`,
      ),
    );
  }
  return forwardToNode(
    c,
    { node, url },
    {
      maxBodyBytes: MAX_MCP_BODY_BYTES,
      // An event stream is quiet while nothing happens (a tool call waiting for a device, the GET
      // stream between notifications): only the owner's socket ends it.
      idleMs: null,
      requestHeaders: MCP_REQUEST_HEADERS,
      answerHeaders: MCP_ANSWER_HEADERS,
      log: { mcpSessionNode: node },
      what: `the node ${node} that holds this MCP session`,
    },
  );
}

const rpcError = (description: string) => ({
  description,
  content: { 'application/json': { schema: McpErrorSchema } },
});
/** A status both the bridge and the transport answer: no single error schema, so no `x-error-codes`. */
const eitherError = (description: string) => ({
  description,
  content: { 'application/json': { schema: McpOrBridgeErrorSchema } },
});
const sessionHeaders = (required: boolean) =>
  z.object({
    'Mcp-Session-Id': required ? McpSessionIdHeader : McpSessionIdHeader.optional(),
    'Mcp-Protocol-Version': McpProtocolVersionHeader.optional(),
  });
const sessionErrors = {
  403: eitherError(
    '`PERMISSION_DENIED` (not a client or admin token) or `CROSS_SITE_REQUEST` (Error); or the session belongs to another token (McpError)',
  ),
  404: rpcError('no such session (McpError -32001): it ended, or its node is gone; initialize a new session'),
  ...errorResponses('UNAUTHENTICATED', 'MISDIRECTED_REQUEST', 'UNAVAILABLE'),
};
const common = {
  path: '/mcp',
  tags: ['MCP'],
  security: [{ bearer: [] }],
};

/** `/mcp` in the OpenAPI document (the transport answers the requests themselves). */
export const mcpRoutes: RouteConfig[] = [
  createRoute({
    ...common,
    method: 'post',
    operationId: 'mcpPost',
    summary: 'Send one MCP message (JSON-RPC): initialize opens a session, then tool calls in it',
    description:
      'The Model Context Protocol over Streamable HTTP (docs/mcp.md). `Accept` must name both ' +
      '`application/json` and `text/event-stream`. An `initialize` request without `Mcp-Session-Id` opens a ' +
      'session: its answer carries the `Mcp-Session-Id` header, which every later request sends. A request ' +
      'is answered as an event stream (progress notifications, then the response); a notification or a ' +
      'response is accepted with 202. The body is read under a 1 MiB limit.',
    request: {
      headers: sessionHeaders(false),
      body: { required: true, content: { 'application/json': { schema: McpMessageSchema } } },
    },
    responses: {
      200: {
        description: "the request's answer: an event stream, or one JSON-RPC response",
        headers: z.object({
          'Mcp-Session-Id': McpSessionIdHeader.optional().openapi({
            description: "the new session (initialize's answer)",
          }),
        }),
        content: {
          'text/event-stream': { schema: McpEventStreamSchema },
          'application/json': { schema: McpMessageSchema },
        },
      },
      202: { description: 'a notification or response accepted (no body)' },
      400: eitherError(
        '`INVALID_ARGUMENT` (Error: the body is not JSON); or (McpError) not a JSON-RPC message, no `Mcp-Session-Id` on a request other than initialize, an unsupported `Mcp-Protocol-Version`',
      ),
      406: rpcError('`Accept` does not name both `application/json` and `text/event-stream`'),
      415: rpcError('`Content-Type` is not `application/json`'),
      429: eitherError(
        '`RATE_LIMITED` (Error); or this token holds the most open sessions a token may (32 per node; McpError)',
      ),
      ...sessionErrors,
      ...errorResponses('PAYLOAD_TOO_LARGE', 'REQUEST_TIMEOUT'),
    },
  }),
  createRoute({
    ...common,
    method: 'get',
    operationId: 'mcpEvents',
    summary: "Open the session's event stream (the server's requests and notifications outside a call)",
    description:
      '`Accept: text/event-stream`. One such stream per session at a time; it stays open, quiet while ' +
      'nothing happens, until the client or the session ends it. No replay: `Last-Event-ID` is not supported.',
    request: { headers: sessionHeaders(true) },
    responses: {
      200: {
        description: 'the event stream',
        content: { 'text/event-stream': { schema: McpEventStreamSchema } },
      },
      400: rpcError('no `Mcp-Session-Id`, or an unsupported `Mcp-Protocol-Version`'),
      406: rpcError('`Accept` does not name `text/event-stream`'),
      409: rpcError('the session has an event stream open already'),
      429: eitherError('`RATE_LIMITED` (Error)'),
      ...sessionErrors,
    },
  }),
  createRoute({
    ...common,
    method: 'delete',
    operationId: 'mcpEnd',
    summary: 'End the session: the leases it holds are released',
    description:
      'MCP clients send it when they close. A session also ends after 10 minutes without a request.',
    request: { headers: sessionHeaders(true) },
    responses: {
      200: { description: 'ended (no body)' },
      400: rpcError('no `Mcp-Session-Id`, or an unsupported `Mcp-Protocol-Version`'),
      429: eitherError('`RATE_LIMITED` (Error)'),
      ...sessionErrors,
    },
  }),
];

export function registerMcp(app: OpenAPIHono<AppEnv>, sessions: McpHttpSessions): void {
  // In the document as any route: who may call it (declared as the guard would declare it).
  for (const route of mcpRoutes) app.openAPIRegistry.registerPath({ ...route, 'x-access': 'client' });
  app.all('/mcp', async (c) => {
    const authorization = c.req.header('authorization');
    if (c.get('services').auth.enabled && authorization === undefined) {
      throw new BridgeError('UNAUTHENTICATED', 'a bearer token is required (Authorization: Bearer <token>)');
    }
    const principal = assertRole(c.get('principal'), 'client');
    // Authenticated and authorized here first: only such a caller is forwarded (with its token).
    const elsewhere = await onSessionNode(c, c.req.header('mcp-session-id'));
    if (elsewhere !== undefined) return elsewhere;
    const token = authorization?.replace(/^bearer +/i, '');
    const client = new DeviceBridgeClient({
      // The origin the caller used (it passed the Host checks); the requests never leave the process.
      baseUrl: new URL(c.req.url).origin,
      ...(token === undefined ? {} : { token }),
      fetch: (input, init) => Promise.resolve(app.request(input, init)),
    });
    // A POST's JSON-RPC message is read here as every small body of the API is: its size limit while
    // it streams, the 10 s deadline a trickled body gets, the strict JSON parser.
    let parsedBody: unknown;
    if (c.req.method === 'POST') {
      const declared = Number(c.req.header('content-length') ?? 0);
      if (declared > MAX_MCP_BODY_BYTES) throw tooLarge(MAX_MCP_BODY_BYTES);
      parsedBody = parseJsonBody(await readLimited(c, MAX_MCP_BODY_BYTES), MAX_MCP_BODY_BYTES);
    }
    const answer = await sessions.handle(
      c.req.raw,
      { key: `${principal.tenant}/${principal.name}`, client },
      { parsedBody, node: c.get('services').deviceSide?.node },
    );
    return withRequestId(c, answer);
  });
}
