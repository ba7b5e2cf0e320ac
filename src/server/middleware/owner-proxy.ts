/**
 * Lease-scoped helper calls (ensure, snapshot, viewport, gestures) run on the node that drives the
 * device. Any node accepts them: a node that does not own the lease's device forwards the request to
 * the owner's URL from the node directory (same method, body and credentials) and relays the answer.
 * Only a caller the route's guard already authenticated and authorized is forwarded, and only for a
 * lease of its own tenant (admins: any): everything else is answered locally (401/403/404), so a
 * forwarded answer never tells a stranger that a lease exists. The body is streamed to the owner
 * under the route's byte limit, never buffered. A request that was already forwarded once is never
 * forwarded again (no loops): when the owner is unknown or stale, the local route answers
 * UNAVAILABLE naming the owner.
 */
import type { Context } from 'hono';
import { BridgeError } from '../../errors.ts';
import type { Principal } from '../auth.ts';
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
];
const LEASE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Forward to the owner node when the caller's lease is driven elsewhere; null: answer locally. */
export async function forwardToOwner(
  c: Context<AppEnv>,
  principal: Principal,
  maxBodyBytes: number,
): Promise<Response | null> {
  const { leases, devices, node } = c.var.services;
  const id = c.req.param('id');
  if (!leases || !devices || !node || c.req.header(PROXIED_HEADER) !== undefined) return null;
  if (id === undefined || !LEASE_ID.test(id)) return null;
  const lease = await leases.get(id);
  if (lease === null || lease.state !== 'active') return null;
  if (principal.role !== 'admin' && lease.tenant !== principal.tenant) return null;
  const record = await devices.get(lease.deviceId).catch(() => null);
  if (record === null || record.ownerNode === node.name) return null;
  const ownerUrl = await node.nodes.urlOf(record.ownerNode);
  if (ownerUrl === null) return null;

  const headers = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  headers.set('x-request-id', c.get('requestId'));
  headers.set(PROXIED_HEADER, node.name);
  const url = new URL(c.req.url);
  const raw = c.req.raw.body;
  const body = hasBody(c) && raw !== null ? limitedStream(raw, maxBodyBytes) : undefined;
  if (body === undefined) headers.delete('content-length');
  c.var.logger.info(
    { leaseId: lease.id, deviceId: lease.deviceId, ownerNode: record.ownerNode },
    'forwarding to the owner node',
  );
  let answer: Response;
  try {
    answer = await fetch(`${ownerUrl.replace(/\/+$/, '')}${url.pathname}${url.search}`, {
      method: c.req.method,
      headers,
      ...(body === undefined ? {} : { body, duplex: 'half' }),
      redirect: 'manual',
      signal: c.req.raw.signal,
    } as RequestInit);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    if (cause instanceof BridgeError) throw cause;
    throw new BridgeError('UNAVAILABLE', `the owner node ${record.ownerNode} did not answer`, {
      details: { ownerNode: record.ownerNode },
    });
  }
  const relayed = new Headers();
  for (const name of ['content-type', 'x-request-id', 'retry-after']) {
    const value = answer.headers.get(name);
    if (value !== null) relayed.set(name, value);
  }
  relayed.set(PROXIED_HEADER, record.ownerNode);
  return new Response(answer.body, { status: answer.status, headers: relayed });
}
