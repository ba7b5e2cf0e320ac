import type { MiddlewareHandler } from 'hono';
import { BridgeError } from '../../errors.ts';
import type { Principal, Role } from '../auth.ts';
import type { AppEnv } from '../env.ts';

/** Resolve the caller (or null) for every request; bad or unknown tokens are refused at once. */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const remote = c.env?.incoming?.socket?.remoteAddress;
    c.set('principal', c.var.services.auth.authenticate(c.req.header('authorization'), remote));
    await next();
  };
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
