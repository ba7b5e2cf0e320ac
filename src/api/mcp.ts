/**
 * Contract of `/mcp`, the Model Context Protocol over Streamable HTTP (docs/mcp.md), as far as
 * OpenAPI can say it: JSON-RPC 2.0 messages in, JSON or Server-Sent Events out, the session in the
 * `Mcp-Session-Id` header. The messages themselves (initialize, tools/list, tools/call, …) are the
 * MCP specification's; the document names them, it does not repeat them.
 */
import { z } from '@hono/zod-openapi';
import { ErrorSchema } from './errors.ts';

const JsonRpcId = z.union([z.string(), z.number().int()]);

const JsonRpcErrorObject = z
  .object({
    code: z.number().int().openapi({ description: 'JSON-RPC error code (-32001: no such session)' }),
    message: z.string(),
    data: z.unknown().optional(),
  })
  .openapi('McpRpcErrorObject');

export const McpMessageSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: JsonRpcId.optional().openapi({
      description: 'a request and its response share it; a notification has none',
    }),
    method: z
      .string()
      .optional()
      .openapi({ description: 'a request or notification: initialize, tools/list, tools/call, ping, …' }),
    params: z.record(z.string(), z.unknown()).optional(),
    result: z.record(z.string(), z.unknown()).optional().openapi({ description: 'a response: the result' }),
    error: JsonRpcErrorObject.optional(),
  })
  .openapi('McpMessage', {
    description:
      'One JSON-RPC 2.0 message of the Model Context Protocol (https://modelcontextprotocol.io): a request ' +
      '(id and method), a notification (method, no id) or a response (id and result or error).',
  });

export const McpErrorSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    error: JsonRpcErrorObject,
    id: JsonRpcId.nullable(),
  })
  .openapi('McpError', {
    description: 'A refusal by the MCP transport or session layer, as a JSON-RPC error (its id is null)',
  });

/** A status either the bridge (Error) or the MCP transport (McpError) answers. */
export const McpOrBridgeErrorSchema = z.union([ErrorSchema, McpErrorSchema]).openapi('McpOrBridgeError', {
  description: "The bridge's Error (authentication, roles, the body) or the MCP transport's JSON-RPC error",
});

export const McpEventStreamSchema = z.string().openapi('McpEventStream', {
  description:
    'Server-Sent Events: each `message` event carries one McpMessage as its data (responses to the ' +
    "request, the server's notifications and requests); the stream ends after the last response",
});

export const McpSessionIdHeader = z
  .string()
  .regex(/^[\x21-\x7e]{1,200}$/)
  .openapi({
    description:
      'the session, as the initialize answer gave it (`<node>~<uuid>`: any node of a fleet serves it)',
    example: 'node-a~2f1c4a8e-5b7d-4e0a-9c3f-1d2e3f4a5b6c',
  });

export const McpProtocolVersionHeader = z
  .string()
  .openapi({ description: 'the MCP protocol version negotiated at initialize', example: '2025-06-18' });
