/**
 * Connections per client address: a client that opens many connections and holds them (slow headers,
 * a trickled body) takes at most `limit` of the server's connections, so the others stay free for
 * everyone else. Counted per TCP peer; trusted proxies (many clients behind one address) are not
 * counted. A connection past the limit is closed as it is accepted, before a byte is read.
 */
import type net from 'node:net';
import { addressBytes } from '../config.ts';

export interface ConnectionLimit {
  /** Connections open now per address (counted ones only). */
  openBy(address: string): number;
  /** Connections closed at accept because their address was at the limit. */
  readonly refused: number;
}

/** Normalised so one address has one count (an IPv4-mapped IPv6 peer is its IPv4 address). */
function keyOf(address: string): string {
  const bytes = addressBytes(address);
  return bytes !== null && bytes.length === 4 ? bytes.join('.') : address;
}

export function limitConnectionsPerAddress(
  server: net.Server,
  limit: number,
  exempt: (address: string) => boolean,
  onRefused?: () => void,
): ConnectionLimit {
  const open = new Map<string, number>();
  let refused = 0;
  server.on('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || exempt(address)) return;
    const key = keyOf(address);
    const n = open.get(key) ?? 0;
    if (n >= limit) {
      refused += 1;
      onRefused?.();
      socket.destroy();
      return;
    }
    open.set(key, n + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
  return {
    openBy: (address) => open.get(keyOf(address)) ?? 0,
    get refused() {
      return refused;
    },
  };
}
