/**
 * Domain errors. Every failure that crosses a module boundary is a `BridgeError` with a stable
 * machine-readable `code`, a `retryable` flag and optional structured `details`. The HTTP edge maps
 * codes to statuses through `ERROR_CODES`; the CLI maps them to exit codes.
 */

/**
 * The one table of error codes: HTTP status, whether a retry may succeed, and what the code means.
 * The HTTP edge answers with `status`, the OpenAPI document lists the table (the Error schema's `code`
 * and `x-error-codes`), and a bare HTTP status (a framework `HTTPException`) maps back to the FIRST
 * code of the table with that status (`codeForStatus`): the generic code of each status comes first.
 */
export const ERROR_CODES = {
  INVALID_ARGUMENT: {
    status: 400,
    retryable: false,
    description: 'a parameter, query or body field breaks its rule (details.errors names each field)',
  },
  INSTALL_ARGS_REJECTED: {
    status: 400,
    retryable: false,
    description: 'a release manifest asks for install flags outside the allowlist',
  },
  UNAUTHENTICATED: {
    status: 401,
    retryable: false,
    description: 'no bearer token where one is needed, or a malformed or unknown one',
  },
  PERMISSION_DENIED: { status: 403, retryable: false, description: "the token's role may not do this" },
  CROSS_SITE_REQUEST: {
    status: 403,
    retryable: false,
    description:
      'a browser request from a page of another origin (Origin, Sec-Fetch-Site): refused without tokens, and on the console sign-in',
  },
  NOT_FOUND: {
    status: 404,
    retryable: false,
    description: "no such route, helper, release, artifact, device or lease (other tenants' leases too)",
  },
  REQUEST_TIMEOUT: {
    status: 408,
    retryable: true,
    description:
      'the request did not arrive in time: the whole request within DEVICEBRIDGE_REQUEST_TIMEOUT_MS, a JSON body within 10 s of its headers; the connection is closed',
  },
  CONFLICT: {
    status: 409,
    retryable: true,
    description:
      'the state changed underneath (no free device, a version published with other bytes, a leased device)',
  },
  COMPANION_REFUSED: {
    status: 409,
    retryable: false,
    description:
      'a glass companion refused the request by its rules (no a11y tree served on this connection, an unnamed window, the window changed); details.reason says which',
  },
  LEASE_EXPIRED: {
    status: 410,
    retryable: false,
    description: 'the lease was released or expired, or the X-Fencing-Token is stale',
  },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, description: "the body exceeds the route's limit" },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    retryable: false,
    description: 'the body has a Content-Type the route does not take',
  },
  MISDIRECTED_REQUEST: {
    status: 421,
    retryable: false,
    description:
      'without tokens, a Host that is not a loopback name or address (localhost, 127.0.0.0/8, [::1]): a DNS-rebound name',
  },
  CHECKSUM_MISMATCH: {
    status: 422,
    retryable: false,
    description: 'an artifact does not have the sha256 its manifest names',
  },
  RATE_LIMITED: {
    status: 429,
    retryable: true,
    description: 'too many expensive calls or failed authentications; see Retry-After',
  },
  CLIENT_CLOSED_REQUEST: {
    status: 499,
    retryable: false,
    description:
      'the client closed its connection before its request was read and answered (in logs and metrics only: nobody receives it)',
  },
  HELPER_INSTALL_FAILED: {
    status: 502,
    retryable: false,
    description: 'the device refused to install the helper (details name the pm failure)',
  },
  HELPER_PROTOCOL_ERROR: {
    status: 502,
    retryable: true,
    description: 'the on-device helper answered bytes that break its protocol',
  },
  HELPER_FAILED: {
    status: 502,
    retryable: true,
    description: 'the on-device helper reported or suffered a failure',
  },
  COMPANION_UNSUPPORTED: {
    status: 501,
    retryable: false,
    description:
      'the leased device cannot run the glass companion (app_process or its abstract socket unavailable, the a11y service never binds)',
  },
  UNAVAILABLE: {
    status: 503,
    retryable: true,
    description:
      'a dependency is not there: no device side on this node, an owner node or store that does not answer',
  },
  DEVICE_OFFLINE: { status: 503, retryable: true, description: 'the leased device is offline' },
  UNAUTHORIZED_DEVICE: {
    status: 503,
    retryable: true,
    description: 'the device has not authorized this adb host',
  },
  TIMEOUT: { status: 504, retryable: true, description: "no answer within the request's deadline" },
  INTERNAL: { status: 500, retryable: false, description: 'a bug: the requestId identifies it in the logs' },
} as const satisfies Record<string, { status: number; retryable: boolean; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Every code, in table order. */
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/** The generic code of an HTTP status (the first in the table with it), INTERNAL when none has it. */
export function codeForStatus(status: number): ErrorCode {
  return ERROR_CODE_NAMES.find((code) => ERROR_CODES[code].status === status) ?? 'INTERNAL';
}

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
