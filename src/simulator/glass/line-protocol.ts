/**
 * The line protocol both glass components speak (the glass contract), as the device side answers it: the
 * `{"hello":{"proto":1}}` banner, then one reply line per request line. A request is a JSON object
 * with an integer id (|id| ≤ 2^53 - 1); anything else gets `{"id":-1,"ok":false,"error":"malformed
 * request"}`. Replies are written byte for byte as the Android components write them (org.json:
 * fields in insertion order, "/" escaped as "\/", control characters as \u00xx, everything else
 * raw UTF-8; an unpaired surrogate becomes "?" on the wire), so the simulator's bytes equal the
 * contract streams in test/fixtures/contract/glass/streams/.
 *
 * A line is read with the bridge's strict JSON (`parseStrictJson`: RFC 8259, no duplicate or
 * prototype keys, at most 64 levels, numbers within a double's range), as the Java components read
 * it with StrictJson.java (android/strict-json/, a port of it); the op is a string.
 * test/fixtures/contract/glass/lines.json holds lines and the answers both sides give.
 */
import { GLASS_BANNER } from '../../protocol/glass/line-protocol.ts';
import { parseStrictJson } from '../../strict-json.ts';

/** The banner (the glass contract), one definition for both sides. */
export const GLASS_HELLO = GLASS_BANNER;
export const GLASS_MALFORMED = '{"id":-1,"ok":false,"error":"malformed request"}';

/** A handler's refusal: answered as `{"id":id,"ok":false,"error":message}`, the connection stays open. */
export class GlassRequestError extends Error {}

export type GlassValue = string | number | boolean | null | GlassValue[] | { [key: string]: GlassValue };

/** An integer a JSON host can hold exactly, or null (org.json: Long, or a Double with no fraction). */
export function glassInteger(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

export function finiteNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The request object and its id, or null for a malformed line. */
export function parseGlassRequest(line: string): { id: number; request: Record<string, unknown> } | null {
  let value: unknown;
  try {
    value = parseStrictJson(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const request = value as Record<string, unknown>;
  const id = glassInteger(Object.hasOwn(request, 'id') ? request['id'] : undefined);
  return id === null ? null : { id, request };
}

/** A field as org.json's optString(name, null) reads it: strings as is, other values in their JSON text. */
export function optString(request: Record<string, unknown>, key: string): string | null {
  if (!Object.hasOwn(request, key)) return null;
  const value = request[key];
  if (typeof value === 'string') return value;
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  return typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

export function requiredString(request: Record<string, unknown>, key: string, what = 'a string'): string {
  const value = Object.hasOwn(request, key) ? request[key] : undefined;
  if (typeof value !== 'string') throw new GlassRequestError(`missing field: ${key} (${what})`);
  return value;
}

/** Replies carry integers only (ids, refs, bounds): printed as Java longs. */
function javaNumber(n: number): string {
  return Number.isSafeInteger(n) ? String(n === 0 ? 0 : n) : String(Math.trunc(n));
}

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A JSON string as org.json's JSONStringer writes it. */
export function glassString(s: string): string {
  let out = '"';
  for (const ch of s.replace(UNPAIRED_SURROGATE, '?')) {
    const c = ch.charCodeAt(0);
    if (ch === '"' || ch === '\\' || ch === '/') out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\f') out += '\\f';
    else if (c <= 0x1f) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A reply value in org.json's text form (objects keep insertion order). */
export function glassJson(value: GlassValue): string {
  if (typeof value === 'string') return glassString(value);
  if (typeof value === 'number') return javaNumber(value);
  if (typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return `[${value.map(glassJson).join(',')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${glassString(k)}:${glassJson(v)}`)
    .join(',')}}`;
}

export function glassOk(id: number, fields: Record<string, GlassValue> = {}): string {
  return glassJson({ id, ok: true, ...fields });
}

export function glassError(id: number, message: string): string {
  return glassJson({ id, ok: false, error: message });
}

/** Answer one line with `handle`; a GlassRequestError (or any error) becomes the error reply. */
export function answerGlassLine(
  line: string,
  handle: (id: number, request: Record<string, unknown>) => string,
): string {
  const parsed = parseGlassRequest(line);
  if (parsed === null) return GLASS_MALFORMED;
  try {
    return handle(parsed.id, parsed.request);
  } catch (err) {
    return glassError(parsed.id, err instanceof Error ? err.message : String(err));
  }
}
