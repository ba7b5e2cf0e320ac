/** Ports for test processes that must be told theirs (the OS picks for everything else: port 0). */
import { createServer } from 'node:net';

/** Can something listen on `host:port` right now? (EADDRNOTAVAIL: the host has no such address.) */
function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'EADDRNOTAVAIL' || err.code === 'EAFNOSUPPORT'),
    );
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * A port that was free on the loopback addresses (IPv4 and IPv6) when asked, for a process that
 * must be told its port (an adb server, redis-server). Chosen below the kernel's ephemeral range
 * (32768+), where listeners on port 0 and outgoing connections land, so that between this check and
 * the real bind only another explicit choice can take it; callers that start a server on it retry
 * with a new port when it was taken meanwhile.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    if ((await canListen(port, '127.0.0.1')) && (await canListen(port, '::1'))) return port;
  }
  throw new Error('no free port below the ephemeral range after 100 tries');
}
