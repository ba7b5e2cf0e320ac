/** A TCP echo server on 127.0.0.1 (any free port) that prefixes replies and counts connections. */
import net from 'node:net';
import type { Duplex } from 'node:stream';

export interface EchoServer {
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

export async function startEchoServer(prefix = 'echo:'): Promise<EchoServer> {
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('data', (b: Buffer) => socket.write(Buffer.concat([Buffer.from(prefix), b])));
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Write `text` on a socket and resolve with the first reply (or 'timeout' / 'closed'). */
export function roundTrip(socket: Duplex, text: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), timeoutMs);
    socket.once('data', (b: Buffer) => {
      clearTimeout(timer);
      resolve(b.toString());
    });
    const closed = (): void => {
      clearTimeout(timer);
      resolve('closed');
    };
    socket.once('end', closed);
    socket.once('close', closed);
    socket.on('error', () => undefined);
    socket.write(text);
  });
}
