/**
 * Who the client is, by address: the TCP peer, or, when the peer is one of the configured trusted
 * proxies (`DEVICEBRIDGE_TRUSTED_PROXIES`), the address its `X-Forwarded-For` names. The rate limits
 * and the loopback rule without tokens key on it. Pure but for the accessor at the end.
 */
import type { Context } from 'hono';
import { type AddressRange, addressBytes, inRange } from '../config.ts';
import type { AppEnv } from './env.ts';

/** An address as one spelling per address: an IPv4-mapped IPv6 peer is its IPv4 address. */
export function normaliseAddress(address: string): string {
  const bytes = addressBytes(address);
  return bytes !== null && bytes.length === 4 ? bytes.join('.') : address;
}

/** Whether `address` is one of the trusted proxies. */
export function isTrustedProxy(address: string, proxies: readonly AddressRange[]): boolean {
  const bytes = addressBytes(address);
  return bytes !== null && proxies.some((range) => inRange(bytes, range));
}

/**
 * The client address of a request from `peer` carrying `forwardedFor` (the `X-Forwarded-For` header,
 * repeated headers joined by commas). Each proxy appends the address it saw, so the chain is read
 * from its end: while the hop in hand is a trusted proxy, the address it appended is believed and
 * becomes the hop in hand; the first hop that is not a trusted proxy is the client. What a client
 * writes into the header itself is to the left of what the first trusted proxy appended, so it is
 * never believed. An entry that is not a bare IP address stops the walk at the proxy that passed it.
 */
export function clientAddressOf(
  peer: string,
  forwardedFor: string | undefined,
  proxies: readonly AddressRange[],
): string {
  let hop = normaliseAddress(peer);
  if (proxies.length === 0 || forwardedFor === undefined) return hop;
  const chain = forwardedFor.split(',');
  for (let i = chain.length - 1; i >= 0; i--) {
    if (!isTrustedProxy(hop, proxies)) return hop;
    const entry = chain[i]!.trim();
    if (addressBytes(entry) === null) return hop;
    hop = normaliseAddress(entry);
  }
  return hop;
}

/** The client address of the request in `c`; undefined in process (tests through `app.request`). */
export function clientAddress(c: Context<AppEnv>): string | undefined {
  const peer = c.env?.incoming?.socket?.remoteAddress;
  if (peer === undefined) return undefined;
  return clientAddressOf(peer, c.req.header('x-forwarded-for'), c.get('services').config.trustedProxies);
}
