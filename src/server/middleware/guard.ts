/**
 * The per-route guard, the first thing a route runs (before its validators and handler): it decides
 * authentication and authorization, then checks the body's media type and size, all before a single
 * body byte is read, so a 401/403/415/413 never depends on the body. JSON bodies are then read with the
 * route's byte limit enforced while streaming (chunked uploads included) and parsed strictly; other
 * bodies (APK uploads) are streamed by their route under the same limit (`limitedStream`).
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { LeaseScope } from '../../app/index.ts';
import { type Capability, hasCapability, type Principal } from '../../auth/tokens.ts';
import { BridgeError, isBridgeError } from '../../errors.ts';
import { LEASE_ID_PATTERN } from '../../leases/types.ts';
import { hasBody, mediaTypeOf, readLimited, tooLarge } from '../body.ts';
import type { AppEnv, Services } from '../env.ts';
import { parseJsonBody } from '../json-body.ts';
import { assertRole, takeExpensive } from './auth.ts';
import { forwardToOwner, PROXIED_HEADER } from './owner-proxy.ts';

/** Who may call a route: anyone, a token of a role (admin always passes), or admin once tokens exist. */
export type Access = 'anyone' | 'client' | 'admin' | 'admin-when-tokens';

export interface BodyPolicy {
  /** Largest body in bytes (or from the configuration), enforced on Content-Length and while streaming. */
  maxBytes: number | ((services: Services) => number);
  /** Accepted media types (essence, lower case). A body of another type is 415. */
  types: readonly string[];
  /** Read and parse the body as strict JSON here (false: the route streams it itself). */
  json: boolean;
}

export interface RoutePolicy {
  access: Access;
  body?: BodyPolicy;
  /** Rate-limited per token and per client address (snapshot, publish). */
  expensive?: boolean;
  /**
   * A large body streamed to disk and processed here (an APK): counted among the node's and the
   * tenant's concurrent uploads until answered (429 past either); a forwarded call counts on the owner.
   */
  upload?: boolean;
  /**
   * A lease-scoped operation: forwarded to the node that drives the lease's device. `or-here`
   * (release: no body): when the owner cannot be reached, the call runs here instead (the lease ends
   * in the store and its teardown waits there for the owner). `stream` (logcat): an answer that may
   * be idle by nature, relayed without the owner proxy's idle limit. `websocket` (the live screen):
   * the scope is resolved here and the route relays the socket to the owner itself.
   */
  forward?: boolean | 'or-here' | 'stream' | 'websocket';
  /** A capability the token must hold besides its role (`shell`, `adb`); refused before anything else runs. */
  capability?: Capability;
}

export const JSON_TYPES = ['application/json'] as const;

/** JSON bodies of the small control routes. */
export function jsonBody(maxBytes: number): BodyPolicy {
  return { maxBytes, types: JSON_TYPES, json: true };
}

function authorize(c: Context<AppEnv>, access: Access): Principal | null {
  const principal = c.get('principal');
  if (access === 'anyone') return principal;
  if (access === 'admin-when-tokens' && !c.get('services').auth.enabled) return principal;
  return assertRole(principal, access === 'client' ? 'client' : 'admin');
}

/** Refuse by headers alone: the media type (415) and the declared length (413). */
export function maxBytesOf(c: Context<AppEnv>, body: BodyPolicy): number {
  return typeof body.maxBytes === 'number' ? body.maxBytes : body.maxBytes(c.get('services'));
}

function checkBodyHeaders(c: Context<AppEnv>, body: BodyPolicy): void {
  if (!hasBody(c)) return;
  const type = mediaTypeOf(c);
  if (!body.types.includes(type)) {
    throw new BridgeError(
      'UNSUPPORTED_MEDIA_TYPE',
      `this route takes ${body.types.join(' or ')}${type === '' ? ' (the request has no Content-Type)' : `, not ${type}`}`,
      { details: { accepted: [...body.types] } },
    );
  }
  const declared = c.req.header('content-length');
  if (declared !== undefined && !/^\d{1,15}$/.test(declared.trim())) {
    throw new BridgeError('INVALID_ARGUMENT', 'Content-Length must be a decimal byte count');
  }
  const limit = maxBytesOf(c, body);
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
}

/** Read a JSON body under the limit, parse it strictly and hand it to the route's validator. */
export async function readJson(c: Context<AppEnv>, body: BodyPolicy): Promise<void> {
  const limit = maxBytesOf(c, body);
  const bytes = hasBody(c) ? await readLimited(c, limit) : new Uint8Array(0);
  // An empty body is `{}` for routes whose body is optional; a required one fails its validator.
  const value = bytes.byteLength === 0 ? {} : parseJsonBody(bytes, limit);
  const parsed = Promise.resolve(value);
  c.req.bodyCache.json = parsed;
  // Hono's `json()` (what the route's validator calls) reads the "text" cache: with only "json"
  // cached it stringified the value again, wrapped it in a new web Response and parsed it a second
  // time. This request's `json()` answers the strictly parsed value itself.
  c.req.json = <T>() => parsed as Promise<T>;
}

/**
 * Resolve the lease scope of a lease-scoped call once: the lease read, tenancy and the fencing token
 * checked, the owner found (and its URL, unless the call was already forwarded once: never again).
 * Undefined when this node has no device side or the id is malformed (the route's validator answers).
 */
function openLeaseScope(c: Context<AppEnv>, principal: Principal): Promise<LeaseScope> | undefined {
  const side = c.get('services').deviceSide;
  const id = c.req.param('id');
  if (side === undefined || id === undefined || !LEASE_ID_PATTERN.test(id)) return undefined;
  const scope = side.scopes.open(principal, id, {
    fencingToken: c.req.header('x-fencing-token'),
    locate: c.req.header(PROXIED_HEADER) === undefined,
  });
  scope.catch(() => undefined); // answered by the handler, after validation
  return scope;
}

/** Each guard's policy, read back when a route is registered (the OpenAPI document declares it). */
const POLICIES = new WeakMap<object, RoutePolicy>();

/** The policy `middleware` enforces, when it is a guard. */
export function guardPolicyOf(middleware: unknown): RoutePolicy | undefined {
  return typeof middleware === 'function' ? POLICIES.get(middleware) : undefined;
}

export function guard(policy: RoutePolicy): MiddlewareHandler<AppEnv> {
  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    const principal = authorize(c, policy.access);
    if (
      policy.capability !== undefined &&
      principal !== null &&
      !hasCapability(principal, policy.capability)
    ) {
      throw new BridgeError(
        'PERMISSION_DENIED',
        `this operation needs the ${policy.capability} capability, which an operator grants per token`,
        { details: { capability: policy.capability } },
      );
    }
    if (policy.expensive) takeExpensive(c, principal);
    if (policy.body) checkBodyHeaders(c, policy.body);
    if (policy.forward && principal !== null) {
      const scope = openLeaseScope(c, principal);
      c.set('leaseScope', scope);
      const settled = await scope?.catch(() => null);
      const owner = settled?.owner;
      if (settled && owner?.kind === 'remote' && owner.url !== null && policy.forward !== 'websocket') {
        const to = { lease: settled.lease, owner: { node: owner.node, url: owner.url } };
        const forwarded = forwardToOwner(
          c,
          to,
          policy.body ? maxBytesOf(c, policy.body) : 0,
          policy.forward === 'stream' ? { idleMs: null } : {},
        );
        if (policy.forward !== 'or-here') return forwarded;
        const answer = await forwarded.catch((err: unknown) => {
          if (isBridgeError(err) && err.code === 'UNAVAILABLE') return null;
          throw err;
        });
        if (answer !== null) return answer;
        c.set('ownerUnreachable', true);
      }
    }
    if (policy.body?.json) await readJson(c, policy.body);
    const uploadDone = policy.upload
      ? c.get('services').uploads.admit(principal?.tenant ?? 'local')
      : undefined;
    try {
      await next();
    } finally {
      uploadDone?.();
    }
    if (policy.access !== 'anyone') {
      // Answers to authenticated callers depend on who asks (tenancy): never from a shared cache.
      setAnswerHeader(c, 'Cache-Control', 'private, no-store');
      setAnswerHeader(c, 'Vary', 'Authorization');
    }
  };
  POLICIES.set(middleware, policy);
  return middleware;
}

/**
 * Set a header on the answer already built. On the Node server an answer is a lightweight response whose
 * headers can be changed in place; `c.header` on a finished answer instead rebuilds it as a web
 * `Response` (converting and re-streaming the whole body: ~1 ms of CPU for a 60 KB snapshot). Headers
 * that cannot change (a relayed fetch answer) fall back to `c.header`.
 */
function setAnswerHeader(c: Context<AppEnv>, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}
