/**
 * Records read back from a store (Redis, memory, files): outside input, checked before anything
 * trusts them. One way for every stored-record kind: `decodeStored` parses the text with the strict
 * JSON parser and validates it with the kind's zod schema; `checkStored` validates a value the store
 * assembled itself (a lease hash). Both answer the schema's output or throw one error type,
 * `StoredRecordError` (INTERNAL), naming the record kind, its key or id and the first bad field —
 * never a value (a record may hold tokens or device data). Whether a bad record is an error or is
 * skipped with a warning is the caller's decision: one bad record must not hide the others.
 */
import type { z } from 'zod';
import { BridgeError, isBridgeError } from './errors.ts';
import { type JsonLimits, parseStrictJson } from './strict-json.ts';

/** Which record: its kind (`lease`, `device record`, …), its key or id, and where it sits in a larger one. */
export interface StoredRecordRef {
  kind: string;
  key?: string;
  /** The field of an enclosing record this text is (e.g. a lease's `selector`); prefixes the bad field. */
  at?: string;
}

/** Stored records are written by the bridge; the limits only keep a corrupt one from blowing the stack. */
export const STORED_JSON_LIMITS = { maxDepth: 64, maxBytes: 64 * 1024 * 1024 } as const;

export class StoredRecordError extends BridgeError {
  readonly kind: string;
  readonly key: string | undefined;
  /** The first bad field (`lease.id`, `selector.labels`), `the record` for the whole, `JSON` for its text. */
  readonly field: string;

  constructor(ref: StoredRecordRef, field: string, problem: string) {
    const name = ref.key === undefined ? ref.kind : `${ref.kind} ${ref.key}`;
    super('INTERNAL', `${name} cannot be read: ${problem}`, {
      details: { kind: ref.kind, ...(ref.key === undefined ? {} : { key: ref.key }), field },
    });
    this.name = 'StoredRecordError';
    this.kind = ref.kind;
    this.key = ref.key;
    this.field = field;
  }
}

export function isStoredRecordError(err: unknown): err is StoredRecordError {
  return err instanceof StoredRecordError;
}

/** Parse `text` with the strict JSON parser and validate it with `schema`. */
export function decodeStored<S extends z.ZodType>(
  schema: S,
  text: string | Uint8Array,
  ref: StoredRecordRef,
  limits: JsonLimits = STORED_JSON_LIMITS,
): z.output<S> {
  let value: unknown;
  try {
    value = parseStrictJson(text, limits);
  } catch (err) {
    // The strict parser's messages name the rule and the place, never the content.
    const why = isBridgeError(err) ? err.message.replace(/^JSON: /, '') : 'unreadable';
    throw new StoredRecordError(
      ref,
      ref.at ?? 'JSON',
      `${ref.at === undefined ? '' : `${ref.at}: `}not valid JSON (${why})`,
    );
  }
  return checkStored(schema, value, ref);
}

/** Validate a value a store assembled from what it read (not JSON text) with `schema`. */
export function checkStored<S extends z.ZodType>(
  schema: S,
  value: unknown,
  ref: StoredRecordRef,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const field = firstBadField(parsed.error.issues, ref.at);
  throw new StoredRecordError(ref, field, `${field} is missing or invalid`);
}

function firstBadField(issues: readonly z.core.$ZodIssue[], at: string | undefined): string {
  const issue = issues[0];
  const path: PropertyKey[] = [...(at === undefined ? [] : [at]), ...(issue?.path ?? [])];
  // An unknown key of a strict object is reported at the object: name the key itself.
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
  return path.length === 0 ? 'the record' : path.map(String).join('.');
}
