import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import {
  type ConsoleSessions,
  CSRF_HEADER,
  csrfMatches,
  isUnsafeMethod,
  SESSION_COOKIE,
} from '../../auth/console-sessions.ts';
import { hashToken, type Principal, type Role } from '../../auth/tokens.ts';
import { BridgeError } from '../../errors.ts';
import { clientAddress } from '../client-address.ts';
import type { AppEnv } from '../env.ts';
import { rateLimited } from '../rate-limit.ts';

/**
 * Resolve the caller (or null) for every request: the bearer token, else (with tokens configured) a
 * console session cookie; bad or unknown tokens are refused at once. Failed
 * authentications are rate-limited per client address and per presented credential (a revoked or
 * guessed token hammered from many addresses): past either limit, a credential that fails is 429
 * instead of 401; one that validates is never refused. Keys hold a digest of the header, never the token.
 */
export function authenticate(sessions?: ConsoleSessions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { auth } = c.get('services');
    const header = c.req.header('authorization');
    const session =
      header === undefined && auth.enabled
        ? await sessions?.get(getCookie(c, SESSION_COOKIE), auth)
        : undefined;
    if (session !== undefined) {
      // A console session stands for the token it was opened with, as the tokens file names it now
      // (get() drops a session whose token is gone or changed). State-changing API calls carry its
      // CSRF token (the console's own form posts under /console/ check their `csrf` field themselves).
      if (
        isUnsafeMethod(c.req.method) &&
        !c.req.path.startsWith('/console/') &&
        !csrfMatches(session, c.req.header(CSRF_HEADER))
      ) {
        throw new BridgeError(
          'PERMISSION_DENIED',
          'a console session must send its CSRF token (X-CSRF-Token) on state-changing requests',
        );
      }
      c.set('principal', session.principal);
      await next();
      return;
    }
    c.set('principal', authenticateLimited(c, header));
    await next();
  };
}

/**
 * `authorization` authenticated under the failed-authentication limiter (the API's bearer header and
 * the console's sign-in form alike), keyed per client address (`clientAddress`: behind a trusted
 * proxy, the address it forwarded) and per digest of the credential. The token is looked at first:
 * one that validates is never refused by the limiter, so a flood of failures from an address (or a
 * proxy every client shares) cannot lock its honest callers out. A credential that fails uses up one
 * event of each key, and past either limit is 429 instead of 401. In-process requests (tests through
 * app.request) have no address and are not limited.
 */
export function authenticateLimited(c: Context<AppEnv>, authorization: string | undefined): Principal | null {
  const { auth, limits, metrics } = c.get('services');
  const remote = clientAddress(c);
  try {
    return auth.authenticate(authorization, remote);
  } catch (err) {
    if (!(err instanceof BridgeError && err.code === 'UNAUTHENTICATED')) throw err;
    const keys =
      remote === undefined || authorization === undefined || !auth.enabled
        ? []
        : [`addr:${remote}`, `cred:${hashToken(authorization).slice(0, 32)}`];
    const wait = Math.max(0, ...keys.map((k) => limits.authFailures.retryAfter(k)));
    if (wait > 0) {
      metrics.rateLimited.inc({ limit: 'auth-failures' });
      throw rateLimited('failed authentications from this address or with this credential', wait);
    }
    for (const k of keys) limits.authFailures.take(k);
    throw err;
  }
}

/** Count an expensive call against the caller's token and address; 429 past either limit. */
export function takeExpensive(c: Context<AppEnv>, principal: Principal | null): void {
  const { limits, metrics, auth } = c.get('services');
  if (!limits.expensive.enabled) return;
  const remote = clientAddress(c);
  const keys = [
    ...(remote === undefined ? [] : [`addr:${remote}`]),
    ...(principal !== null && auth.enabled ? [`token:${principal.name}`] : []),
  ];
  const wait = Math.max(0, ...keys.map((k) => limits.expensive.retryAfter(k)));
  if (wait > 0) {
    metrics.rateLimited.inc({ limit: 'expensive' });
    throw rateLimited('expensive calls (snapshot, screenshot, shell, install, doctor, publish)', wait);
  }
  for (const k of keys) limits.expensive.take(k);
}

/** Throw unless the caller has one of `roles` (admin always passes); resolves the principal. */
export function assertRole(principal: Principal | null, ...roles: Role[]): Principal {
  if (principal === null)
    throw new BridgeError(
      'UNAUTHENTICATED',
      'a bearer token is required (Authorization: Bearer <token>; the CLI and the typed client read DEVICEBRIDGE_TOKEN)',
    );
  if (principal.role !== 'admin' && !roles.includes(principal.role)) {
    throw new BridgeError('PERMISSION_DENIED', `this operation needs the ${roles.join(' or ')} role`);
  }
  return principal;
}

/** Require a caller with one of `roles` (admin always passes). */
export function requireRole(...roles: Role[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    assertRole(c.get('principal'), ...roles);
    await next();
  };
}
