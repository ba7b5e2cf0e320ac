import type { Context, MiddlewareHandler } from 'hono';
import { BridgeError } from '../../errors.ts';
import { hashToken, type Principal, type Role } from '../auth.ts';
import type { AppEnv } from '../env.ts';
import { rateLimited } from '../rate-limit.ts';

/**
 * Resolve the caller (or null) for every request; bad or unknown tokens are refused at once. Failed
 * authentications are rate-limited per client address and per presented credential (a revoked or
 * guessed token hammered from many addresses): past either limit, a request carrying credentials is
 * 429 before its token is even looked at. Keys hold a digest of the header, never the token.
 */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { auth, limits, metrics } = c.var.services;
    const remote = c.env?.incoming?.socket?.remoteAddress;
    const header = c.req.header('authorization');
    // In-process requests (tests through app.request) have no address and are not limited.
    const keys =
      remote === undefined || header === undefined || !auth.enabled
        ? []
        : [`addr:${remote}`, `cred:${hashToken(header).slice(0, 32)}`];
    const wait = Math.max(0, ...keys.map((k) => limits.authFailures.retryAfter(k)));
    if (wait > 0) {
      metrics.rateLimited.inc({ limit: 'auth-failures' });
      throw rateLimited('failed authentications from this address or with this credential', wait);
    }
    try {
      c.set('principal', auth.authenticate(header, remote));
    } catch (err) {
      if (err instanceof BridgeError && err.code === 'UNAUTHENTICATED') {
        for (const k of keys) limits.authFailures.take(k);
      }
      throw err;
    }
    await next();
  };
}

/** Count an expensive call against the caller's token and address; 429 past either limit. */
export function takeExpensive(c: Context<AppEnv>, principal: Principal | null): void {
  const { limits, metrics, auth } = c.var.services;
  if (!limits.expensive.enabled) return;
  const remote = c.env?.incoming?.socket?.remoteAddress;
  const keys = [
    ...(remote === undefined ? [] : [`addr:${remote}`]),
    ...(principal !== null && auth.enabled ? [`token:${principal.name}`] : []),
  ];
  const wait = Math.max(0, ...keys.map((k) => limits.expensive.retryAfter(k)));
  if (wait > 0) {
    metrics.rateLimited.inc({ limit: 'expensive' });
    throw rateLimited('expensive calls (snapshot, publish)', wait);
  }
  for (const k of keys) limits.expensive.take(k);
}

/** Throw unless the caller has one of `roles` (admin always passes); resolves the principal. */
export function assertRole(principal: Principal | null, ...roles: Role[]): Principal {
  if (principal === null) throw new BridgeError('UNAUTHENTICATED', 'a bearer token is required');
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
