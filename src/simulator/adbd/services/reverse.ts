/**
 * `reverse:` services, as adbd answers them: `reverse:forward:[norebind:]tcp:X;tcp:Y` listens on the
 * device's port X and, for each connection an app makes to it, opens a stream towards the host with
 * destination `tcp:Y` (the host's adb server connects to its localhost:Y); `reverse:list-forward`,
 * `reverse:killforward:tcp:X`, `reverse:killforward-all`. Reverses belong to the transport (the
 * connection): they go away with it.
 *
 * Answers on the stream, as adbd's `handle_forward_request` writes them on the device: `OKAY` (and
 * for `tcp:0` the chosen port as a length-prefixed string), `FAIL` + 4 hex digits + message, and
 * for the list only the length-prefixed text (`SERIAL LOCAL REMOTE\n` per reverse).
 */
import type { Duplex } from 'node:stream';
import { encodeFailure, encodeLengthPrefixed, tcpSpecPort } from '../../../protocol/adb/host-protocol.ts';
import type { DeviceListener, SimAndroid } from '../../types.ts';
import type { AdbStream } from '../stream.ts';
import { pipeSocket } from './socket.ts';

/** What a reverse needs of its connection: a stream opened from the device towards the host. */
export interface ReverseTransport {
  /** OPEN `destination` towards the host; undefined when the host refused (CLSE). */
  openToHost(destination: string): Promise<AdbStream | undefined>;
}

interface Reverse {
  remote: string;
  listener: DeviceListener;
}

/** The reverses of one connection. */
export class ReverseRegistry {
  readonly #android: SimAndroid;
  readonly #transport: ReverseTransport;
  readonly #serial: string;
  readonly #byLocal = new Map<string, Reverse>();

  constructor(android: SimAndroid, transport: ReverseTransport, serial: string) {
    this.#android = android;
    this.#transport = transport;
    this.#serial = serial;
  }

  /** Answer one `reverse:…` request (the text after `reverse:`). */
  answer(request: string): Buffer {
    if (request === 'list-forward') {
      const lines = [...this.#byLocal].map(([local, r]) => `${this.#serial} ${local} ${r.remote}\n`);
      return encodeLengthPrefixed(lines.join(''));
    }
    if (request === 'killforward-all') {
      this.removeAll();
      return Buffer.from('OKAY', 'ascii');
    }
    if (request.startsWith('killforward:')) {
      const local = request.slice('killforward:'.length);
      const entry = this.#byLocal.get(local);
      if (entry === undefined) return encodeFailure(`listener '${local}' not found`);
      entry.listener.close();
      this.#byLocal.delete(local);
      return Buffer.from('OKAY', 'ascii');
    }
    if (request.startsWith('forward:')) {
      let rest = request.slice('forward:'.length);
      const norebind = rest.startsWith('norebind:');
      if (norebind) rest = rest.slice('norebind:'.length);
      const semi = rest.indexOf(';');
      if (semi < 0) return encodeFailure(`malformed forward spec '${rest}'`);
      const localSpec = rest.slice(0, semi);
      const remote = rest.slice(semi + 1);
      const localPort = tcpSpecPort(localSpec);
      if (localPort === undefined) return encodeFailure(`unsupported local spec '${localSpec}'`);
      if (remote.length === 0 || remote.includes('\0'))
        return encodeFailure(`malformed remote spec '${remote}'`);
      const existing = localPort === 0 ? undefined : this.#byLocal.get(localSpec);
      if (existing !== undefined) {
        if (norebind) return encodeFailure('cannot rebind existing socket');
        existing.remote = remote;
        return Buffer.from('OKAY', 'ascii');
      }
      const port = localPort === 0 ? this.#freePort() : localPort;
      let listener: DeviceListener;
      try {
        listener = this.#android.device.listen({ tcp: port }, (socket: Duplex) =>
          this.#connected(`tcp:${port}`, socket),
        );
      } catch (err) {
        return encodeFailure(`cannot bind listener: ${(err as Error).message}`);
      }
      this.#byLocal.set(`tcp:${port}`, { remote, listener });
      const okay = Buffer.from('OKAY', 'ascii');
      return localPort === 0 ? Buffer.concat([okay, encodeLengthPrefixed(String(port))]) : okay;
    }
    return encodeFailure('not a reverse forwarding command');
  }

  /** Every reverse goes (the transport closed). */
  removeAll(): void {
    for (const entry of this.#byLocal.values()) entry.listener.close();
    this.#byLocal.clear();
  }

  #freePort(): number {
    const taken = new Set(this.#android.listening());
    for (let port = 40000; port < 65535; port++) if (!taken.has(`tcp:${port}`)) return port;
    return 65535;
  }

  #connected(local: string, socket: Duplex): void {
    const entry = this.#byLocal.get(local);
    if (entry === undefined) {
      socket.end();
      return;
    }
    socket.pause();
    socket.on('error', () => undefined);
    void this.#transport.openToHost(entry.remote).then(
      (stream) => {
        // Refused by the host: the app sees its connection end (EOF), as with adbd.
        if (stream === undefined) socket.end();
        else {
          pipeSocket(socket, stream);
          socket.resume();
        }
      },
      () => socket.end(),
    );
  }
}
