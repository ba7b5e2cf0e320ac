/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP for AI agents (docs/mcp.md). The caller is
 * authenticated as for the API (a bearer token when tokens are configured; loopback only without);
 * each tool call then goes through the API itself, in process, with the caller's own Authorization,
 * so tenancy, roles, capabilities, rate limits and forwarding to the lease's node are the API's.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { DeviceBridgeClient } from '../../client/index.ts';
import { BridgeError } from '../../errors.ts';
import type { McpHttpSessions } from '../../mcp/http-sessions.ts';
import { readLimited, tooLarge } from '../body.ts';
import type { AppEnv } from '../env.ts';
import { parseJsonBody } from '../json-body.ts';
import { assertRole } from '../middleware/auth.ts';

/** Largest MCP message (a type_text or clipboard_set of 64 KiB of text fits many times). */
const MAX_MCP_BODY_BYTES = 1024 * 1024;

export function registerMcp(app: OpenAPIHono<AppEnv>, sessions: McpHttpSessions): void {
  app.all('/mcp', async (c) => {
    const authorization = c.req.header('authorization');
    if (c.get('services').auth.enabled && authorization === undefined) {
      throw new BridgeError('UNAUTHENTICATED', 'a bearer token is required (Authorization: Bearer <token>)');
    }
    const principal = assertRole(c.get('principal'), 'client');
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
    return sessions.handle(c.req.raw, { key: `${principal.tenant}/${principal.name}`, client }, parsedBody);
  });
}
