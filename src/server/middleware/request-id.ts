import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { lazyChild } from '../../observability/logger.ts';
import type { AppEnv } from '../env.ts';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Accept a caller's `X-Request-Id` when it is safe to log, otherwise mint one; echo it back. */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header('x-request-id');
    const id = given !== undefined && SAFE_ID.test(given) ? given : randomUUID();
    c.set('requestId', id);
    c.set('logger', lazyChild(c.get('services').logger, { requestId: id }));
    c.header('X-Request-Id', id);
    await next();
  };
}
