/**
 * What a tool answers: text (and structured content), or a tool error (`isError: true`) that names
 * the bridge's error code, its message and what the agent should do next. A tool never throws into
 * the session: every failure becomes one of these.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BridgeClientError } from '../client/index.ts';

/** An error a tool raises itself (a stale ref, a missing snapshot), with the same shape as the bridge's. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly next: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** What to do after a bridge error, by its code. */
const NEXT_STEP: Record<string, string> = {
  INVALID_ARGUMENT: 'fix the argument the message names and call again',
  UNAUTHENTICATED: 'configure a valid bridge token (Authorization: Bearer, or DEVICEBRIDGE_TOKEN)',
  PERMISSION_DENIED: 'this token may not do this; ask an operator for the role or capability it names',
  NOT_FOUND:
    'the lease (or app) is not there: call list_devices / acquire_device again, or check the id you passed',
  LEASE_EXPIRED: 'the lease ended: acquire a device again with acquire_device',
  CONFLICT:
    'no device is free for that selector now: call acquire_device again with waitSeconds, or a wider selector',
  RATE_LIMITED: 'too many calls: wait the seconds the message gives, then call again',
  DEVICE_OFFLINE: 'the device went offline: release it and acquire another',
  TIMEOUT: 'the device did not answer in time: call again, or with a longer deadline',
  UNAVAILABLE: 'the bridge or the device is busy or unreachable: call again shortly',
  COMPANION_UNSUPPORTED:
    'this device cannot do that (its Android version or its companions); use another tool',
  COMPANION_REFUSED: 'the device refused: check the focused field or the node, take a new snapshot',
  HELPER_FAILED: 'the on-device helper failed: take a new snapshot and try again',
  PAYLOAD_TOO_LARGE: 'send less: the message gives the limit',
};

export function textResult(text: string, structured?: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text }],
    ...(structured === undefined ? {} : { structuredContent: structured }),
  };
}

export function errorResult(code: string, message: string, next: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}\nNext: ${next}` }],
    structuredContent: { error: { code, message, next } },
  };
}

/** The tool error for anything a tool threw. */
export function resultOfError(err: unknown): CallToolResult {
  if (err instanceof ToolError) return errorResult(err.code, err.message, err.next);
  if (err instanceof BridgeClientError) {
    const next =
      NEXT_STEP[err.code] ??
      (err.retryable ? 'call again shortly' : 'check the arguments and the device state');
    const detail = err.requestId === undefined ? '' : ` (requestId ${err.requestId})`;
    return errorResult(err.code, `${err.message}${detail}`, next);
  }
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return errorResult('TIMEOUT', 'the bridge did not answer in time', 'call again shortly');
  }
  const message = err instanceof Error ? err.message : String(err);
  return errorResult(
    'UNAVAILABLE',
    `the bridge could not be reached: ${message}`,
    'check the bridge URL and call again',
  );
}
