/**
 * Lease-scoped helper calls (ensure, snapshot, viewport, gestures) run on the node that drives the
 * device. Any node accepts them: the route's guard resolves the lease scope once (the application
 * layer's `LeaseScopes`), and when another node drives the device it forwards the request to the
 * owner's URL from the node directory (same method, body and credentials: the bearer header, or a
 * console session's cookie and CSRF token) and relays the answer.
 * Only a caller the route's guard already authenticated and authorized is forwarded, and only for a
 * lease of its own tenant (admins: any): everything else is answered locally (401/403/404), so a
 * forwarded answer never tells a stranger that a lease exists. The body is streamed to the owner
 * under the route's byte limit, never buffered. A request that was already forwarded once is never
 * forwarded again (no loops): when the owner is unknown or stale, the local route answers
 * UNAVAILABLE naming the owner.
 *
 * Time limits: the owner must answer (headers) within the forward timeout, else a retryable
 * UNAVAILABLE; after the headers, the relayed body must keep moving: a gap longer than the same
 * timeout between two chunks (a hung owner) aborts the forwarded call and ends the relayed body with
 * an error (the client sees a truncated answer, never a hang). Streams that may be idle by nature
 * (logcat) are relayed without the idle limit (`idleMs: null`); they end with the owner's socket.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { CSRF_HEADER, isSessionId, SESSION_COOKIE } from '../../auth/console-sessions.ts';
import { BridgeError } from '../../errors.ts';
import type { Lease } from '../../leases/types.ts';
import { hasBody, limitedStream } from '../body.ts';
import type { AppEnv } from '../env.ts';

export const PROXIED_HEADER = 'x-devicebridge-forwarded-by';
const FORWARDED_HEADERS = [
  'authorization',
  'content-type',
  'content-length',
  'x-request-id',
  'x-fencing-token',
  'accept',
  // A console session's CSRF token: the owner checks it against the session (shared in Redis).
  CSRF_HEADER,
];

/**
 * Forward a lease-scoped call to the node that drives the lease's device. The scope was resolved
 * once (`LeaseScopes.open`: lease read, tenancy and fencing checked, owner and its URL found).
 *
 * The answer is the owner's answer to the same route, relayed: `Answer` is that route's answer type,
 * inferred where a handler returns the forwarded answer as its own (the guard takes a `Response`).
 */
export async function forwardToOwner<Answer = Response>(
  c: Context<AppEnv>,
  scope: {
    lease: Pick<Lease, 'id' | 'deviceId'> | { id?: undefined; deviceId: string };
    owner: { node: string; url: string };
  },
  maxBodyBytes: number,
  options: { idleMs?: number | null } = {},
): Promise<Answer & Response> {
  const { lease, owner } = scope;
  return forwardToNode<Answer>(c, owner, {
    maxBodyBytes,
    ...options,
    log: { leaseId: lease.id, deviceId: lease.deviceId },
    what: `the owner node ${owner.node} of device ${lease.deviceId}`,
    details: { deviceId: lease.deviceId },
  });
}

export interface ForwardOptions {
  /** The request body's byte limit while it streams to the node. */
  maxBodyBytes: number;
  /** The longest gap between two chunks of the answer (default: the forward timeout; null: none). */
  idleMs?: number | null;
  /** Request headers to send besides the standard ones (lower case). */
  requestHeaders?: readonly string[];
  /** Answer headers to relay besides the standard ones (lower case). */
  answerHeaders?: readonly string[];
  /** Fields of the log lines. */
  log: Record<string, unknown>;
  /** Who the node is, for the UNAVAILABLE message (`the owner node n1 of device d1`). */
  what: string;
  /** More details of the UNAVAILABLE error. */
  details?: Record<string, unknown>;
}

/**
 * Forward the request as it is (method, path, query, body, credentials) to another node of the
 * fleet and relay its answer, streamed. The caller was authenticated and authorized here already;
 * the node authenticates it again itself. Never used on a request that was forwarded once already.
 */
export async function forwardToNode<Answer = Response>(
  c: Context<AppEnv>,
  target: { node: string; url: string },
  options: ForwardOptions,
): Promise<Answer & Response> {
  const { node: ownerNode, url: ownerUrl } = target;
  const self = c.get('services').deviceSide?.node ?? 'unknown';

  const headers = new Headers();
  for (const name of [...FORWARDED_HEADERS, ...(options.requestHeaders ?? [])]) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  // A console caller has no bearer header: forward its session cookie (only that one), which the
  // owner resolves from the shared session store, authenticating the caller again itself.
  const session = getCookie(c, SESSION_COOKIE);
  if (c.req.header('authorization') === undefined && isSessionId(session)) {
    headers.set('cookie', `${SESSION_COOKIE}=${session}`);
  }
  headers.set('x-request-id', c.get('requestId'));
  headers.set(PROXIED_HEADER, self);
  const url = new URL(c.req.url);
  const raw = c.req.raw.body;
  const body = hasBody(c) && raw !== null ? limitedStream(raw, options.maxBodyBytes) : undefined;
  if (body === undefined) headers.delete('content-length');
  c.get('logger').info({ ...options.log, ownerNode }, 'forwarding to the owner node');
  // The owner must answer (headers) within the forward timeout; the body then streams under the
  // request's own deadline. A dead, hung or unreachable owner is a retryable UNAVAILABLE naming it.
  const timeoutMs = c.get('services').config.forwardTimeoutMs;
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new BridgeError('TIMEOUT', `no answer within ${timeoutMs} ms`)),
    timeoutMs,
  );
  let answer: Response;
  try {
    answer = await fetch(`${ownerUrl.replace(/\/+$/, '')}${url.pathname}${url.search}`, {
      method: c.req.method,
      headers,
      ...(body === undefined ? {} : { body, duplex: 'half' }),
      redirect: 'manual',
      signal: AbortSignal.any([c.req.raw.signal, timeout.signal]),
    } as RequestInit);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    // The route's own refusal of the streamed body (e.g. PAYLOAD_TOO_LARGE) stays what it is.
    if (cause instanceof BridgeError && !timeout.signal.aborted) throw cause;
    const why = timeout.signal.aborted
      ? `did not answer within ${timeoutMs} ms`
      : `is not reachable (${cause instanceof Error ? cause.message : String(cause)})`;
    c.get('logger').warn({ ...options.log, ownerNode, why }, 'owner node did not answer');
    throw new BridgeError('UNAVAILABLE', `${options.what} ${why}; retry`, {
      retryable: true,
      details: { ownerNode, ...options.details },
    });
  } finally {
    clearTimeout(timer);
  }
  const idleMs = options.idleMs === undefined ? timeoutMs : options.idleMs;
  const relayed = new Headers();
  for (const name of ['content-type', 'x-request-id', 'retry-after', ...(options.answerHeaders ?? [])]) {
    const value = answer.headers.get(name);
    if (value !== null) relayed.set(name, value);
  }
  relayed.set(PROXIED_HEADER, ownerNode);
  const relayedBody =
    answer.body === null || idleMs === null
      ? answer.body
      : relayWithIdleLimit(answer.body, idleMs, (why) => {
          c.get('logger').warn({ ...options.log, ownerNode, why }, 'owner node stalled mid-answer');
          timeout.abort(why);
        });
  // The owner ran the same route (same method, path and body): its answer is one of the route's.
  return new Response(relayedBody, { status: answer.status, headers: relayed }) as Answer & Response;
}

/**
 * Relay `body` chunk by chunk; when no chunk (nor its end) arrives within `idleMs`, call `onIdle`
 * (which aborts the upstream call) and end the relayed stream with a TIMEOUT error.
 */
export function relayWithIdleLimit(
  body: ReadableStream<Uint8Array>,
  idleMs: number,
  onIdle: (why: BridgeError) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<'stalled'>((resolve) => {
        timer = setTimeout(() => resolve('stalled'), idleMs);
      });
      try {
        const next = await Promise.race([reader.read(), stalled]);
        if (next === 'stalled') {
          const why = new BridgeError('TIMEOUT', `the owner node sent nothing for ${idleMs} ms`, {
            retryable: true,
          });
          onIdle(why);
          reader.cancel(why).catch(() => undefined);
          controller.error(why);
          return;
        }
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (err) {
        controller.error(err);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
