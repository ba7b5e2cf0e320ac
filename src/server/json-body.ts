/**
 * Request bodies that are JSON go through the strict boundary parser once, at the edge: UTF-8 only,
 * no duplicate keys, no `__proto__`/`constructor`/`prototype` keys, nesting at most 64 deep, and no
 * more bytes than the route's limit. Errors are INVALID_ARGUMENT naming the rule, line, column and
 * JSON path, never echoing input values.
 */
import { BridgeError, isBridgeError } from '../errors.ts';
import { parseStrictJson } from '../strict-json.ts';

export const MAX_BODY_DEPTH = 64;

/** Parse a request body (already size-limited while streaming) strictly. */
export function parseJsonBody(bytes: Uint8Array, maxBytes: number): unknown {
  try {
    return parseStrictJson(bytes, { maxBytes, maxDepth: MAX_BODY_DEPTH });
  } catch (err) {
    if (!isBridgeError(err)) throw err;
    throw new BridgeError('INVALID_ARGUMENT', `request body: ${err.message}`, {
      ...(err.details === undefined ? {} : { details: err.details }),
    });
  }
}
