/**
 * The sessions of the Streamable HTTP transport (`/mcp` on the bridge), kept in this node's memory:
 * each has its own MCP server and state, is bound to the principal that opened it (another token
 * presenting its id is refused), renews the leases it holds while it is active, and releases them
 * when it is deleted (HTTP DELETE), idle past `idleMs`, or the node closes. A session's id names
 * this node (`session-id.ts`), so the other nodes of a fleet hand its requests here.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { DeviceBridgeClient } from '../client/index.ts';
import { PeriodicTask } from '../periodic.ts';
import { createMcpSession, type McpSession, releaseHeld, renewHeld } from './server.ts';
import { newSessionId } from './session-id.ts';
import type { ToolCallExtra } from './tools.ts';

/** Who sends a request: a key naming the principal, and the bridge client acting as it. */
export interface McpCaller {
  key: string;
  client: DeviceBridgeClient;
}

export interface McpHttpSessionsOptions {
  /** A session without a request for this long ends (its leases released). Default 10 minutes. */
  idleMs?: number;
  /** How often an active session renews its leases. Default 60 s. */
  renewMs?: number;
  /** How often sessions are checked. Default 15 s. */
  sweepMs?: number;
  /** Largest request body. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Open sessions per principal at most (a new one past it is 429). Default 32. */
  maxPerPrincipal?: number;
}

interface HttpSession extends McpSession {
  id: string;
  transport: WebStandardStreamableHTTPServerTransport;
  owner: string;
  /** The client of the latest request (used to renew and release when no request is in hand). */
  client: DeviceBridgeClient;
  lastSeen: number;
  lastRenewed: number;
  ended: Promise<void> | undefined;
}

const CLIENT_KEY = 'devicebridgeClient';

/** The bridge client a tool call came with (put there by `handle`). */
export function clientOfCall(extra: ToolCallExtra): DeviceBridgeClient {
  const client = extra.authInfo?.extra?.[CLIENT_KEY];
  if (!(client instanceof DeviceBridgeClient)) throw new Error('a tool call without its bridge client');
  return client;
}

/** A JSON-RPC error answer of the transport's kind (no request id: it answers none). */
export function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

export class McpHttpSessions {
  readonly #sessions = new Map<string, HttpSession>();
  readonly #idleMs: number;
  readonly #renewMs: number;
  readonly #maxBodyBytes: number;
  readonly #maxPerPrincipal: number;
  readonly #sweeper: PeriodicTask;

  constructor(options: McpHttpSessionsOptions = {}) {
    this.#idleMs = options.idleMs ?? 10 * 60_000;
    this.#renewMs = options.renewMs ?? 60_000;
    this.#maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.#maxPerPrincipal = options.maxPerPrincipal ?? 32;
    this.#sweeper = new PeriodicTask(options.sweepMs ?? 15_000, () => this.sweep());
  }

  /** Open sessions on this node. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * One HTTP request to `/mcp` from `caller`; a POST's message already parsed (`parsedBody`) when
   * given. `node`: this node's name, which the id of a session opened now carries.
   */
  async handle(
    request: Request,
    caller: McpCaller,
    options: { parsedBody?: unknown; node?: string | undefined } = {},
  ): Promise<Response> {
    const { parsedBody } = options;
    this.#sweeper.start();
    const authInfo = { token: '', clientId: caller.key, scopes: [], extra: { [CLIENT_KEY]: caller.client } };
    const handling = parsedBody === undefined ? { authInfo } : { authInfo, parsedBody };
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const session = this.#sessions.get(id);
      if (session === undefined || session.ended !== undefined) {
        return jsonRpcError(
          404,
          -32001,
          'no such MCP session (it ended, or its node restarted): initialize a new one',
        );
      }
      if (session.owner !== caller.key) {
        return jsonRpcError(403, -32003, 'this MCP session belongs to another token');
      }
      session.client = caller.client;
      session.lastSeen = Date.now();
      return session.transport.handleRequest(request, handling);
    }
    if (request.method !== 'POST') {
      return jsonRpcError(
        400,
        -32000,
        'an Mcp-Session-Id header is required (POST an initialize request to open a session)',
      );
    }
    const owned = [...this.#sessions.values()].filter((s) => s.owner === caller.key).length;
    if (owned >= this.#maxPerPrincipal) {
      return jsonRpcError(
        429,
        -32000,
        `this token has ${owned} open MCP sessions, the most a token may hold: end one (DELETE /mcp with its Mcp-Session-Id) first`,
      );
    }
    const session = this.#open(caller, options.node);
    const answer = await session.transport.handleRequest(request, handling);
    // Not an initialize request (the transport refused it): nothing was opened.
    if (!this.#sessions.has(session.id)) await session.server.close();
    return answer;
  }

  #open(caller: McpCaller, node: string | undefined): HttpSession {
    const { server, state } = createMcpSession(clientOfCall);
    const session: HttpSession = {
      id: '',
      server,
      state,
      owner: caller.key,
      client: caller.client,
      lastSeen: Date.now(),
      lastRenewed: Date.now(),
      ended: undefined,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => newSessionId(node),
        maxRequestBodySize: this.#maxBodyBytes,
        onsessioninitialized: (id) => {
          session.id = id;
          this.#sessions.set(id, session);
        },
        onsessionclosed: () => this.#end(session),
      }),
    };
    server.connect(session.transport).catch(() => undefined);
    return session;
  }

  /** End a session: forget it, release its leases, close its server. Idempotent. */
  #end(session: HttpSession): Promise<void> {
    session.ended ??= (async () => {
      this.#sessions.delete(session.id);
      await releaseHeld(session.state, session.client);
      await session.server.close().catch(() => undefined);
    })();
    return session.ended;
  }

  /** End the sessions idle past the limit; renew the leases of the others when due. */
  async sweep(now = Date.now()): Promise<void> {
    for (const session of [...this.#sessions.values()]) {
      if (now - session.lastSeen >= this.#idleMs) {
        await this.#end(session);
      } else if (now - session.lastRenewed >= this.#renewMs) {
        session.lastRenewed = now;
        await renewHeld(session.state, session.client);
      }
    }
  }

  /** End every session (their leases released) and stop checking. */
  async close(): Promise<void> {
    await this.#sweeper.stop();
    await Promise.all([...this.#sessions.values()].map((s) => this.#end(s)));
  }
}
