/**
 * Shared vocabulary of the snapshot helper's wire contract (the snapshot helper contract): protocol literals, the typed
 * view of a final result / session header block, and the error constructors every protocol module
 * uses. Pure.
 *
 * Result convention of `src/protocol/helper/`: parsers never throw on outside input. Functions that
 * can fail return `{ ok: false, error: BridgeError }` (code `HELPER_PROTOCOL_ERROR` for bytes that break
 * the contract, `HELPER_FAILED` when the helper reported or suffered a failure); builders that take
 * our own input throw `BridgeError('INVALID_ARGUMENT')`.
 */
import { BridgeError } from '../../errors.ts';

export const SNAPSHOT_HELPER_PROTOCOL = 'android-snapshot-helper-v1';
export const SNAPSHOT_OUTPUT_FORMAT = 'uiautomator-xml';

export type HelperMode = 'snapshot' | 'viewport' | 'gesture' | 'session';

/** Typed final fields of a snapshot capture (one-shot result or session header block). */
export interface SnapshotResultFields {
  agentDeviceProtocol: string;
  helperApiVersion?: number;
  outputFormat?: string;
  waitForIdleTimeoutMs?: number;
  waitForIdleQuietMs?: number;
  timeoutMs?: number;
  maxDepth?: number;
  maxNodes?: number;
  rootPresent?: boolean;
  captureMode?: string;
  windowCount?: number;
  nodeCount?: number;
  truncated?: boolean;
  elapsedMs?: number;
  /** Session responses only: UTF-8 byte length of the body. */
  byteLength?: number;
  requestId?: string;
  /** Fields this host does not know, verbatim (kept, never trusted). */
  extra?: Record<string, string>;
}

export interface ViewportResultFields extends Omit<SnapshotResultFields, 'byteLength'> {
  kind: 'viewport';
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface GestureResultFields extends Omit<SnapshotResultFields, 'byteLength'> {
  kind: string;
  injectedEvents: number;
  elapsedMs?: number;
}

export type Fields = Record<string, string>;

export type Failure = { ok: false; error: BridgeError };

export function protocolError(message: string, details: Record<string, unknown>): Failure {
  return { ok: false, error: new BridgeError('HELPER_PROTOCOL_ERROR', message, { details }) };
}

export function helperFailed(
  message: string,
  details: Record<string, unknown>,
  retryable?: boolean,
): Failure {
  return {
    ok: false,
    error: new BridgeError(
      'HELPER_FAILED',
      message,
      retryable === undefined ? { details } : { details, retryable },
    ),
  };
}

const NUMBER_FIELDS = new Set([
  'helperApiVersion',
  'waitForIdleTimeoutMs',
  'waitForIdleQuietMs',
  'timeoutMs',
  'maxDepth',
  'maxNodes',
  'windowCount',
  'nodeCount',
  'elapsedMs',
  'byteLength',
  'injectedEvents',
  'x',
  'y',
  'width',
  'height',
  'sessionPort',
]);
const BOOLEAN_FIELDS = new Set(['rootPresent', 'truncated', 'ok', 'sessionReady', 'sessionEnded']);
const STRING_FIELDS = new Set([
  'agentDeviceProtocol',
  'outputFormat',
  'captureMode',
  'kind',
  'requestId',
  'errorType',
  'message',
]);

/** A decimal integer (optional leading '-'), as the helper prints Java ints and longs; else undefined. */
export function parseIntegerField(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const length = value.length;
  if (length === 0 || length > 16) return undefined;
  let i = value.charCodeAt(0) === 45 ? 1 : 0;
  if (i === length) return undefined;
  for (; i < length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  return Number(value);
}

export function parseBooleanField(value: string | undefined): boolean | undefined {
  return value === 'true' ? true : value === 'false' ? false : undefined;
}

/**
 * Typed view of a final field set: known numeric/boolean fields converted, strings kept, unknown
 * keys under `extra`. A known field whose text does not parse is reported in `invalid`.
 */
export function typeFields(fields: Fields): { typed: Record<string, unknown>; invalid: string[] } {
  const typed: Record<string, unknown> = {};
  const invalid: string[] = [];
  let extra: Record<string, string> | undefined;
  for (const key of Object.keys(fields)) {
    const raw = fields[key] as string;
    if (NUMBER_FIELDS.has(key)) {
      const n = parseIntegerField(raw);
      if (n === undefined) invalid.push(key);
      else typed[key] = n;
    } else if (BOOLEAN_FIELDS.has(key)) {
      const b = parseBooleanField(raw);
      if (b === undefined) invalid.push(key);
      else typed[key] = b;
    } else if (STRING_FIELDS.has(key)) {
      typed[key] = raw;
    } else {
      extra ??= Object.create(null) as Record<string, string>;
      extra[key] = raw;
    }
  }
  if (extra !== undefined) typed['extra'] = { ...extra };
  return { typed, invalid };
}

/**
 * Whether `xml` looks like a complete uiautomator hierarchy: a `<hierarchy` start tag and a
 * `</hierarchy>` end tag after it. Cheap (two indexOf scans), not a validation of the XML.
 */
export function hasHierarchy(xml: string): boolean {
  const start = xml.indexOf('<hierarchy');
  if (start === -1) return false;
  const after = xml.charCodeAt(start + 10);
  // `<hierarchy>` or `<hierarchy ...` (not `<hierarchyX`).
  if (!(after === 62 || after === 32 || after === 9 || after === 10 || after === 13 || after === 47))
    return false;
  return xml.lastIndexOf('</hierarchy>') > start;
}

/**
 * The `ok` verdict shared by one-shot results and session headers: `ok=false` is the helper's own
 * failure (HELPER_FAILED with errorType/message), anything but `ok=true` or a field of the wrong type
 * is a protocol error; otherwise the typed fields without `ok`. `what` names the source in messages
 * ("helper result", "session header"); `context` is added to a helper failure's details.
 */
export function okVerdict(
  fields: Fields,
  what: string,
  context: Record<string, unknown>,
): Failure | { ok: true; typed: Record<string, unknown> } {
  if (fields['ok'] === 'false') {
    return helperFailed(fields['message'] ?? 'helper reported a failure', {
      reason: 'helper-error',
      errorType: fields['errorType'] ?? null,
      message: fields['message'] ?? null,
      ...context,
    });
  }
  if (fields['ok'] !== 'true') {
    return protocolError(`${what} has no ok=true|false`, { reason: 'missing-ok', ok: fields['ok'] ?? null });
  }
  const { typed, invalid } = typeFields(fields);
  delete typed['ok'];
  if (invalid.length > 0) {
    return protocolError(`${what} field ${invalid[0]} is not valid`, {
      reason: 'invalid-field',
      fields: invalid,
    });
  }
  return { ok: true, typed };
}
