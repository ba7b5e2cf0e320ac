/**
 * Connections per client address: a client that opens many connections and holds them (slow headers,
 * a trickled body) takes at most `limit` of the server's connections, so the others stay free for
 * everyone else. Counted per TCP peer; trusted proxies (many clients behind one address) are not
 * counted. A connection past the limit is closed as it is accepted, before a byte is read.
 */
import type net from 'node:net';
import { normaliseAddress } from './client-address.ts';

export function limitConnectionsPerAddress(
  server: net.Server,
  limit: number,
  exempt: (address: string) => boolean,
): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || exempt(address)) return;
    const key = normaliseAddress(address);
    const n = open.get(key) ?? 0;
    if (n >= limit) {
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
}
