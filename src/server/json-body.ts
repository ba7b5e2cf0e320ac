/** Request bodies that are JSON: UTF-8 only, parsed once at the edge. */
import { BridgeError } from '../errors.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parse a request body (already size-limited) as JSON; INVALID_ARGUMENT names the problem. */
export function parseJsonBody(bytes: Uint8Array, _maxBytes: number): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new BridgeError('INVALID_ARGUMENT', 'request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BridgeError('INVALID_ARGUMENT', `request body is not JSON: ${(err as Error).message}`);
  }
}
