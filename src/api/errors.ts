/**
 * The error envelope of every failed request and the operations' error responses, both from the one
 * code table (`ERROR_CODES` in src/errors.ts): the Error schema's `code` enum carries the table, and
 * each operation's error responses name the codes they can answer (`x-error-codes`).
 */
import { z } from '@hono/zod-openapi';
import { ERROR_CODE_NAMES, ERROR_CODES, type ErrorCode } from '../errors.ts';
import { AttemptSchema } from './attempts.ts';

function codeTable(): string {
  const rows = ERROR_CODE_NAMES.map((code) => {
    const { status, retryable, description } = ERROR_CODES[code];
    return `| \`${code}\` | ${status} | ${retryable ? 'yes' : 'no'} | ${description} |`;
  });
  return ['| code | HTTP status | retryable | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

export const FieldErrorSchema = z
  .object({ path: z.string(), message: z.string() })
  .openapi('FieldError', { description: 'one field that breaks its rule: dotted path and the rule' });

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODE_NAMES).openapi({
        description: `Stable machine-readable code; its HTTP status is fixed by this table:\n\n${codeTable()}`,
      }),
      message: z.string(),
      requestId: z.string().openapi({ description: 'also in the X-Request-Id header' }),
      retryable: z.boolean(),
      details: z
        .object({
          attempts: z.array(AttemptSchema).optional().openapi({
            description: 'what the request tried, in order (helper and glass companion errors)',
          }),
        })
        .catchall(z.unknown())
        .optional()
        .openapi({ description: 'more about the failure, by code; `attempts` has one shape everywhere' }),
    }),
  })
  .openapi('Error', { description: 'The body of every error answer' });

export type ErrorBody = z.infer<typeof ErrorSchema>;

/** The table as the document's `x-error-codes` extension: code → status, retryable, meaning. */
export function errorCodeExtension(): Record<
  ErrorCode,
  { status: number; retryable: boolean; description: string }
> {
  return Object.fromEntries(
    ERROR_CODE_NAMES.map((code) => {
      const { status, retryable, description } = ERROR_CODES[code];
      return [code, { status, retryable, description }];
    }),
  ) as Record<ErrorCode, { status: number; retryable: boolean; description: string }>;
}

/**
 * Codes every request can meet at the edge: a malformed or unknown token, too many failed
 * authentications; without tokens, a browser page of another origin or a Host that is not loopback.
 */
export const EDGE_ERRORS = [
  'UNAUTHENTICATED',
  'RATE_LIMITED',
  'CROSS_SITE_REQUEST',
  'MISDIRECTED_REQUEST',
] as const satisfies readonly ErrorCode[];
/** A route for some roles: the edge, a missing token and the wrong role. */
export const SECURED_ERRORS = [...EDGE_ERRORS, 'PERMISSION_DENIED'] as const satisfies readonly ErrorCode[];
/** A route with a body: an invalid field, a body too large, not JSON, or too slow to arrive. */
export const BODY_ERRORS = [
  'INVALID_ARGUMENT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'REQUEST_TIMEOUT',
] as const satisfies readonly ErrorCode[];
/**
 * A lease-scoped route: a malformed id, the lease is not the caller's, has ended or its fencing token
 * moved on, or this node has no device side / the owner node does not answer.
 */
export const LEASE_ERRORS = [
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'CONFLICT',
  'LEASE_EXPIRED',
  'UNAVAILABLE',
] as const satisfies readonly ErrorCode[];
/** A helper operation on a leased device (the helper is ensured first). */
export const HELPER_ERRORS = [
  'INSTALL_ARGS_REJECTED',
  'CHECKSUM_MISMATCH',
  'HELPER_INSTALL_FAILED',
  'HELPER_PROTOCOL_ERROR',
  'HELPER_FAILED',
  'DEVICE_OFFLINE',
  'UNAUTHORIZED_DEVICE',
  'TIMEOUT',
] as const satisfies readonly ErrorCode[];

export interface ErrorResponse {
  description: string;
  content: { 'application/json': { schema: typeof ErrorSchema } };
  'x-error-codes': ErrorCode[];
}

/**
 * The error responses of an operation that can answer `codes`: one response per status, whose
 * description and `x-error-codes` name the codes (their statuses come from the table).
 */
export function errorResponses(...groups: ReadonlyArray<ErrorCode | readonly ErrorCode[]>) {
  const codes = new Set(groups.flat() as ErrorCode[]);
  const out: Record<number, ErrorResponse> = {};
  for (const code of ERROR_CODE_NAMES) {
    if (!codes.has(code)) continue;
    const status = ERROR_CODES[code].status;
    const response = out[status] ?? {
      description: '',
      content: { 'application/json': { schema: ErrorSchema } },
      'x-error-codes': [],
    };
    response['x-error-codes'].push(code);
    out[status] = response;
  }
  for (const response of Object.values(out)) {
    response.description = response['x-error-codes']
      .map((code) => `\`${code}\`: ${ERROR_CODES[code].description}`)
      .join('; ');
  }
  return out;
}
