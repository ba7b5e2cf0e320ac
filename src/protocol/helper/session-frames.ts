/**
 * Persistent-session frames of the snapshot helper (the snapshot helper contract, "Persistent Session"): one request
 * line per connection, answered by a header block of `key=value` lines, a blank line, then the body
 * (the XML for `snapshot`, nothing for the other commands). Pure.
 */
import { Buffer, isUtf8 } from 'node:buffer';
import { BridgeError } from '../../errors.ts';
import {
  type Failure,
  type GestureResultFields,
  hasHierarchy,
  okVerdict,
  protocolError,
  SNAPSHOT_HELPER_PROTOCOL,
  SNAPSHOT_OUTPUT_FORMAT,
  type SnapshotResultFields,
  type ViewportResultFields,
} from './helper-fields.ts';
import { decodeUtf8 } from './utf8.ts';

export type SessionCommand = 'snapshot' | 'viewport' | 'gesture' | 'quit';

const COMMANDS: ReadonlySet<string> = new Set(['snapshot', 'viewport', 'gesture', 'quit']);
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function isValidRequestId(requestId: string): boolean {
  return REQUEST_ID.test(requestId);
}

/** Strict padded base64 (RFC 4648 alphabet, no whitespace), non-empty. */
export function isStrictBase64(text: string): boolean {
  return text.length > 0 && BASE64.test(text);
}

/**
 * The request line for one session command, ending in "\n". `payloadBase64` is required for
 * `gesture` and refused otherwise. Throws `BridgeError('INVALID_ARGUMENT')` naming the bad part.
 */
export function buildSessionRequest(
  command: SessionCommand,
  requestId: string,
  payloadBase64?: string,
): string {
  if (!COMMANDS.has(command)) {
    throw new BridgeError('INVALID_ARGUMENT', `unknown session command ${JSON.stringify(command)}`, {
      details: { field: 'command' },
    });
  }
  if (typeof requestId !== 'string' || !isValidRequestId(requestId)) {
    throw new BridgeError('INVALID_ARGUMENT', 'requestId must match [A-Za-z0-9._-]{1,64}', {
      details: { field: 'requestId' },
    });
  }
  if (command === 'gesture') {
    if (typeof payloadBase64 !== 'string' || !isStrictBase64(payloadBase64)) {
      throw new BridgeError('INVALID_ARGUMENT', 'gesture payload must be non-empty strict base64', {
        details: { field: 'payloadBase64' },
      });
    }
    return `gesture ${requestId} ${payloadBase64}\n`;
  }
  if (payloadBase64 !== undefined) {
    throw new BridgeError('INVALID_ARGUMENT', `${command} takes no payload`, {
      details: { field: 'payloadBase64' },
    });
  }
  return `${command} ${requestId}\n`;
}

export interface SessionResponseBase {
  ok: true;
  requestId: string;
  /** Every header verbatim (null prototype). */
  headers: Record<string, string>;
}

export type SessionResponse =
  | (SessionResponseBase & {
      command: 'snapshot';
      result: SnapshotResultFields;
      xml: string;
      byteLength: number;
    })
  | (SessionResponseBase & { command: 'viewport'; result: ViewportResultFields })
  | (SessionResponseBase & { command: 'gesture'; result: GestureResultFields })
  | (SessionResponseBase & { command: 'quit'; result: SnapshotResultFields })
  | Failure;

export interface ExpectedResponse {
  requestId: string;
  command: SessionCommand;
}

/** Split the header block off: index of the first byte after the blank line, and the header end. */
function findBlankLine(bytes: Uint8Array): { headerEnd: number; bodyStart: number } | null {
  // A blank line is "\n\n" or "\n\r\n" (CRLF headers, accepted defensively); a response may also
  // start with a blank line only if it has no headers, which the checks below reject.
  let i = bytes.indexOf(10);
  while (i !== -1) {
    const next = bytes[i + 1];
    if (next === 10) return { headerEnd: i, bodyStart: i + 2 };
    if (next === 13 && bytes[i + 2] === 10) return { headerEnd: i, bodyStart: i + 3 };
    i = bytes.indexOf(10, i + 1);
  }
  return null;
}

/** Header map, or the first malformed line (as a string). */
function parseHeaders(text: string): { headers: Record<string, string> } | { badLine: string } {
  const headers = Object.create(null) as Record<string, string>;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const lineEnd = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
    const eq = text.indexOf('=', start);
    if (eq === -1 || eq >= lineEnd || eq === start) {
      return { badLine: text.slice(start, Math.min(lineEnd, start + 120)) };
    }
    headers[text.slice(start, eq)] = text.slice(eq + 1, lineEnd);
    start = end + 1;
  }
  return { headers };
}

/**
 * Parse one complete session response (all bytes up to the server's close) for the request
 * `expected`. Checks, in order: header block present and well-formed; `agentDeviceProtocol`;
 * `requestId` (a different id is stale output from an earlier request → `HELPER_PROTOCOL_ERROR`,
 * reason `stale-response`); `ok` (`false` → `HELPER_FAILED` with `errorType`/`message`); for
 * snapshots `outputFormat`, `byteLength` against the body's UTF-8 byte length and the hierarchy;
 * for the other commands an empty body and their typed fields. Never throws.
 */
export function parseSessionResponse(bytes: Uint8Array, expected: ExpectedResponse): SessionResponse {
  const split = findBlankLine(bytes);
  if (split === null) {
    return protocolError('session response has no blank line after its headers', {
      reason: 'incomplete-headers',
      byteLength: bytes.length,
    });
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerText = buffer.toString('utf8', 0, split.headerEnd);
  const parsed = parseHeaders(headerText);
  if ('badLine' in parsed) {
    return protocolError('session header line is not key=value', {
      reason: 'invalid-header',
      line: parsed.badLine,
    });
  }
  const headers = parsed.headers;
  const protocol = headers['agentDeviceProtocol'];
  if (protocol !== SNAPSHOT_HELPER_PROTOCOL) {
    return protocolError(
      `session response protocol is ${protocol ?? 'missing'}, not ${SNAPSHOT_HELPER_PROTOCOL}`,
      {
        reason: 'protocol-mismatch',
        agentDeviceProtocol: protocol ?? null,
      },
    );
  }
  const requestId = headers['requestId'];
  if (requestId !== expected.requestId) {
    return protocolError(
      `session response is for request ${requestId ?? '(none)'}, not ${expected.requestId}`,
      {
        reason: 'stale-response',
        requestId: requestId ?? null,
        expectedRequestId: expected.requestId,
      },
    );
  }
  const verdict = okVerdict(headers, 'session header', { requestId });
  if (!verdict.ok) return verdict;
  const { typed } = verdict;
  const bodyLength = bytes.length - split.bodyStart;
  const base = { ok: true as const, requestId, headers };
  if (expected.command === 'snapshot') {
    if (headers['outputFormat'] !== SNAPSHOT_OUTPUT_FORMAT) {
      return protocolError(`session snapshot outputFormat is ${headers['outputFormat'] ?? 'missing'}`, {
        reason: 'format-mismatch',
        outputFormat: headers['outputFormat'] ?? null,
      });
    }
    const declared = typed['byteLength'];
    if (declared === undefined) {
      return protocolError('session snapshot has no byteLength header', {
        reason: 'missing-field',
        field: 'byteLength',
      });
    }
    if (declared !== bodyLength) {
      return protocolError(`session snapshot body is ${bodyLength} bytes, byteLength says ${declared}`, {
        reason: 'byte-length-mismatch',
        byteLength: declared,
        received: bodyLength,
      });
    }
    const body = buffer.subarray(split.bodyStart);
    if (!isUtf8(body)) {
      return protocolError('session snapshot body is not valid UTF-8', { reason: 'invalid-utf8' });
    }
    const xml = decodeUtf8(body);
    if (!hasHierarchy(xml)) {
      return protocolError('session snapshot body has no <hierarchy ...> ... </hierarchy>', {
        reason: 'missing-hierarchy',
        head: xml.slice(0, 80),
      });
    }
    return {
      ...base,
      command: 'snapshot',
      result: typed as unknown as SnapshotResultFields,
      xml,
      byteLength: bodyLength,
    };
  }
  if (bodyLength !== 0) {
    return protocolError(`${expected.command} response has an unexpected ${bodyLength}-byte body`, {
      reason: 'unexpected-body',
      received: bodyLength,
    });
  }
  if (expected.command === 'viewport') {
    for (const key of ['x', 'y', 'width', 'height']) {
      if (typed[key] === undefined) return missing(key, 'viewport');
    }
    return { ...base, command: 'viewport', result: typed as unknown as ViewportResultFields };
  }
  if (expected.command === 'gesture') {
    for (const key of ['kind', 'injectedEvents']) {
      if (typed[key] === undefined) return missing(key, 'gesture');
    }
    return { ...base, command: 'gesture', result: typed as unknown as GestureResultFields };
  }
  return { ...base, command: 'quit', result: typed as unknown as SnapshotResultFields };
}

function missing(field: string, command: string): Failure {
  return protocolError(`${command} response has no ${field}`, { reason: 'missing-field', field });
}
