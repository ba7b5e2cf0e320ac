/**
 * How the bridge reaches an adb server: an `AdbServerConnector` opens one fresh connection per
 * request (adb's host protocol serves one request per connection, or one stream after `OKAY`).
 * Client and server-manager code take a connector, never a host/port pair; the TCP connector is
 * the implementation the bridge uses (a test may pass its own, e.g. one that fails on purpose).
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { type Deadline, withDeadline } from './deadline.ts';

export interface AdbServerConnector {
  /** A new connection to the adb server; rejects when the server cannot be reached in time. */
  connect(deadline?: Deadline): Promise<Duplex>;
  /** Where the server is, for messages (`127.0.0.1:5137`). */
  readonly address: string;
  /** The host on which ports the server forwards (`adb forward tcp:...`) are reached. */
  readonly forwardHost: string;
}

/** The adb server on a TCP port (the bridge's private one, or `ADB_SERVER`). */
export class TcpAdbServerConnector implements AdbServerConnector {
  readonly host: string;
  readonly port: number;

  constructor(options: { host?: string; port: number }) {
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port;
  }

  get forwardHost(): string {
    return this.host;
  }

  get address(): string {
    return this.host.includes(':') ? `[${this.host}]:${this.port}` : `${this.host}:${this.port}`;
  }

  connect(deadline: Deadline = {}): Promise<Duplex> {
    const socket = net.connect({ host: this.host, port: this.port });
    socket.setNoDelay(true);
    const connected = new Promise<Duplex>((resolve, reject) => {
      const onError = (err: Error) => {
        socket.off('connect', onConnect);
        socket.destroy();
        reject(err);
      };
      const onConnect = () => {
        socket.off('error', onError);
        resolve(socket);
      };
      socket.once('error', onError);
      socket.once('connect', onConnect);
    });
    return withDeadline(
      connected,
      { timeoutMs: 30_000, ...deadline },
      `connect to adb server ${this.address}`,
      () => socket.destroy(),
    );
  }
}
