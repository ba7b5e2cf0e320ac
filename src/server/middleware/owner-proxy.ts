/**
 * Lease-scoped helper calls (ensure, snapshot, viewport, gestures) run on the node that drives the
 * device. Any node accepts them: a node that does not own the lease's device forwards the request to
 * the owner's URL from the node directory (same method, body and credentials) and relays the answer.
 * A request that was already forwarded once is never forwarded again (no loops): when the owner is
 * unknown or stale, the local route answers UNAVAILABLE naming the owner.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';

export const PROXIED_HEADER = 'x-devicebridge-forwarded-by';
const FORWARDED_HEADERS = ['authorization', 'content-type', 'x-request-id', 'x-fencing-token', 'accept'];
const HELPER_OPERATION =
  /^\/v1\/leases\/([A-Za-z0-9_-]{1,64})\/(?:snapshot|viewport|gestures|helpers\/[^/]+\/ensure)$/;

export function ownerProxy(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const match = HELPER_OPERATION.exec(c.req.path);
    const { leases, devices, node } = c.var.services;
    if (!match || !leases || !devices || !node || c.req.header(PROXIED_HEADER) !== undefined) return next();
    const lease = await leases.get(match[1]!);
    if (lease === null || lease.state !== 'active') return next();
    const record = await devices.get(lease.deviceId).catch(() => null);
    if (record === null || record.ownerNode === node.name) return next();
    const ownerUrl = await node.nodes.urlOf(record.ownerNode);
    if (ownerUrl === null) return next();

    const headers = new Headers();
    for (const name of FORWARDED_HEADERS) {
      const value = c.req.header(name);
      if (value !== undefined) headers.set(name, value);
    }
    headers.set('x-request-id', c.get('requestId'));
    headers.set(PROXIED_HEADER, node.name);
    const url = new URL(c.req.url);
    const body = c.req.method === 'GET' || c.req.method === 'HEAD' ? undefined : await c.req.arrayBuffer();
    c.var.logger.info(
      { leaseId: lease.id, deviceId: lease.deviceId, ownerNode: record.ownerNode },
      'forwarding to the owner node',
    );
    const answer = await fetch(`${ownerUrl.replace(/\/+$/, '')}${url.pathname}${url.search}`, {
      method: c.req.method,
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
      signal: c.req.raw.signal,
    });
    const relayed = new Headers();
    for (const name of ['content-type', 'x-request-id']) {
      const value = answer.headers.get(name);
      if (value !== null) relayed.set(name, value);
    }
    relayed.set(PROXIED_HEADER, record.ownerNode);
    return new Response(answer.body, { status: answer.status, headers: relayed });
  };
}
