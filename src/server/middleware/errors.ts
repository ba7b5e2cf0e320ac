/**
 * The HTTP edge of errors: one envelope `{"error":{code,message,requestId,retryable,details?}}`,
 * one `onError`, one validation hook turning zod failures into 400s that name the field.
 */
import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ZodError } from 'zod';
import { BridgeError, codeForStatus, type FieldError } from '../../errors.ts';
import type { AppEnv } from '../env.ts';

export function errorBody(c: Context<AppEnv>, err: BridgeError) {
  return {
    error: {
      code: err.code,
      message: err.message,
      requestId: c.get('requestId') ?? 'unknown',
      retryable: err.retryable,
      ...(err.details === undefined ? {} : { details: err.details }),
    },
  };
}

export function errorResponse(c: Context<AppEnv>, err: BridgeError): Response {
  const retryAfter = err.details?.['retryAfterSeconds'];
  if (err.code === 'RATE_LIMITED' && typeof retryAfter === 'number')
    c.header('Retry-After', String(retryAfter));
  return c.json(errorBody(c, err), err.status as ContentfulStatusCode);
}

/**
 * Whether the connection ended before the request was read to its end or answered: `closed` by the
 * client (a failure then — the body stream erred, a wait aborted — is the client's going, not a fault
 * here), or cut by Node's own request timeout (`timed-out`: Node already answered 408).
 */
function connectionEnded(c: Context<AppEnv>): 'closed' | 'timed-out' | undefined {
  const incoming = c.env?.incoming;
  if (incoming === undefined) return undefined;
  const socket = incoming.socket as (typeof incoming.socket & { errored?: unknown }) | undefined;
  const gone = (incoming.destroyed && !incoming.complete) || socket?.destroyed === true;
  if (!gone) return undefined;
  const cause = socket?.errored as NodeJS.ErrnoException | null | undefined;
  return cause?.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'timed-out' : 'closed';
}

export const onError: ErrorHandler<AppEnv> = (err, c) => {
  const ended = !(err instanceof BridgeError) || err.status >= 500 ? connectionEnded(c) : undefined;
  if (ended !== undefined) {
    // Counted and logged (the access log, at info) as 499 or 408; the answer reaches nobody.
    const reason = err instanceof Error ? err.message : String(err);
    c.get('logger')?.debug({ reason, ended }, 'the connection ended before the answer');
    return errorResponse(
      c,
      ended === 'closed'
        ? new BridgeError('CLIENT_CLOSED_REQUEST', 'the client closed the connection before its answer')
        : new BridgeError('REQUEST_TIMEOUT', 'the request did not arrive within the request timeout'),
    );
  }
  if (err instanceof BridgeError) {
    if (err.status >= 500)
      c.get('logger')?.error({ err: { code: err.code, message: err.message } }, 'request failed');
    return errorResponse(c, err);
  }
  if (err instanceof HTTPException) {
    const code = codeForStatus(err.status);
    return errorResponse(c, new BridgeError(code, err.message || code));
  }
  c.get('logger')?.error({ err }, 'unhandled error');
  return errorResponse(c, new BridgeError('INTERNAL', 'internal error'));
};

export const notFound: NotFoundHandler<AppEnv> = (c) =>
  errorResponse(
    c,
    new BridgeError('NOT_FOUND', `no route for ${c.req.method} ${new URL(c.req.url).pathname}`),
  );

export function zodFieldErrors(error: ZodError, prefix = ''): FieldError[] {
  return error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter((s) => s !== '').join('.'),
    message: issue.message,
  }));
}

const TARGET_WORDS: Record<string, string> = {
  json: 'body field',
  query: 'query parameter',
  param: 'path parameter',
  header: 'header',
  form: 'form field',
};

/** `defaultHook` of OpenAPIHono: a failed request validation becomes a 400 naming each field. */
export function validationHook(
  result: { success: true } | { success: false; error: ZodError; target?: string },
  c: Context<AppEnv>,
): Response | undefined {
  if (result.success) return undefined;
  const errors = zodFieldErrors(result.error);
  const first = errors[0];
  // hono names the parts of a request by its validator targets: say them as a user reads them.
  const where = result.target === undefined ? '' : `${TARGET_WORDS[result.target] ?? result.target} `;
  const message = first ? `invalid ${where}${first.path || 'value'}: ${first.message}` : 'invalid request';
  return errorResponse(c, new BridgeError('INVALID_ARGUMENT', message, { details: { errors } }));
}
