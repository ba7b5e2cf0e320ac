/**
 * A TCP relay on a loopback port the OS picks, in front of a listening server: what a network path
 * between a browser and the bridge is, so a test can cut it. Bytes pass unchanged both ways (the
 * `Host` a browser sends names the relay, so its pages are same-origin with what they fetch through it).
 */
import { createConnection, createServer, type Socket } from 'node:net';

export interface TcpRelay {
  /** `http://127.0.0.1:<port>` of the relay. */
  url: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections open now (each with its upstream). */
  readonly open: number;
  /** Connections hung up at once while the relay was refusing. */
  readonly refused: number;
  /** Hang up every new connection at once (a server not answering yet) until `pass()`. */
  refuse(): void;
  /** Relay new connections again. */
  pass(): void;
  /** Destroy every open connection, both sides, as a network failure does; how many there were. */
  cut(): number;
  close(): Promise<void>;
}

export interface TcpRelayOptions {
  /** Start refusing (as `refuse()`). */
  refusing?: boolean;
  /** Hang up this many first connections at once, then relay (counted, not timed). */
  refuseFirst?: number;
  /** Cut a connection idle (no byte either way) this long, as a load balancer's idle timeout does. */
  idleCutMs?: number;
}

export async function tcpRelay(target: string, options: TcpRelayOptions = {}): Promise<TcpRelay> {
  const to = new URL(target);
  const pairs = new Set<[Socket, Socket]>();
  let accepted = 0;
  let refusing = options.refusing ?? false;
  let refused = 0;
  const server = createServer((client) => {
    if (refusing || refused < (options.refuseFirst ?? 0)) {
      refused++;
      client.on('error', () => undefined);
      client.destroy();
      return;
    }
    accepted++;
    const upstream = createConnection({ host: to.hostname, port: Number(to.port) });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    for (const [s, other] of [pair, [upstream, client]] as const) {
      s.on('error', () => undefined);
      s.on('close', () => {
        pairs.delete(pair);
        other.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
    if (options.idleCutMs !== undefined) client.setTimeout(options.idleCutMs, () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const cut = (): number => {
    const n = pairs.size;
    for (const [client, upstream] of [...pairs]) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    return n;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    get refused() {
      return refused;
    },
    refuse: () => {
      refusing = true;
    },
    pass: () => {
      refusing = false;
    },
    cut,
    close: async () => {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
