/**
 * Domain errors. Every failure that crosses a module boundary is a `BridgeError` with a stable
 * machine-readable `code`, a `retryable` flag and optional structured `details`. The HTTP edge maps
 * codes to statuses through `ERROR_CODES`; the CLI maps them to exit codes.
 */

export const ERROR_CODES = {
  INVALID_ARGUMENT: { status: 400, retryable: false },
  INSTALL_ARGS_REJECTED: { status: 400, retryable: false },
  UNAUTHENTICATED: { status: 401, retryable: false },
  PERMISSION_DENIED: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  CONFLICT: { status: 409, retryable: true },
  LEASE_EXPIRED: { status: 410, retryable: false },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false },
  CHECKSUM_MISMATCH: { status: 422, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  HELPER_INSTALL_FAILED: { status: 502, retryable: false },
  HELPER_PROTOCOL_ERROR: { status: 502, retryable: true },
  HELPER_FAILED: { status: 502, retryable: true },
  DEVICE_OFFLINE: { status: 503, retryable: true },
  UNAUTHORIZED_DEVICE: { status: 503, retryable: true },
  UNAVAILABLE: { status: 503, retryable: true },
  TIMEOUT: { status: 504, retryable: true },
  INTERNAL: { status: 500, retryable: false },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface BridgeErrorOptions {
  details?: Record<string, unknown>;
  retryable?: boolean;
  cause?: unknown;
}

export class BridgeError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: BridgeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BridgeError';
    this.code = code;
    this.retryable = options.retryable ?? ERROR_CODES[code].retryable;
    this.details = options.details;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  toJSON(): { code: ErrorCode; message: string; retryable: boolean; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }
}

export function isBridgeError(value: unknown): value is BridgeError {
  return value instanceof BridgeError;
}

/** A field-level validation problem: `path` is dotted (`installArgs.2`), `message` names the rule. */
export interface FieldError {
  path: string;
  message: string;
}

export function invalidArgument(message: string, errors: FieldError[] = []): BridgeError {
  return new BridgeError('INVALID_ARGUMENT', message, errors.length > 0 ? { details: { errors } } : {});
}
