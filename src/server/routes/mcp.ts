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
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
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
    return jsonRpcError(
      404,
      -32001,
      alive
        ? `this MCP session's node ${node} has no URL in the node directory: initialize a new session`
        : `this MCP session's node ${node} is gone (not in the node directory): initialize a new session`,
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

export function registerMcp(app: OpenAPIHono<AppEnv>, sessions: McpHttpSessions): void {
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
    return sessions.handle(
      c.req.raw,
      { key: `${principal.tenant}/${principal.name}`, client },
      { parsedBody, node: c.get('services').deviceSide?.node },
    );
  });
}
