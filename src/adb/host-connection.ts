/**
 * One connection to the adb server speaking the host protocol (protocol/adb/host-protocol.ts): it
 * writes requests and waits for replies; the framing and the parsing are the pure module's. After an
 * `OKAY` that opens a stream (`shell,v2,raw:`, `exec:`), `detach()` hands the socket over with any
 * bytes already read put back.
 */
import type { Duplex } from 'node:stream';
import { encodeHostRequest, HostReplyReader } from '../protocol/adb/host-protocol.ts';
import type { AdbServerConnector } from './connector.ts';
import { type Deadline, withDeadline } from './deadline.ts';

const DEFAULT_TIMEOUT = 30_000;

export class HostConnection {
  readonly #socket: Duplex;
  readonly #reader = new HostReplyReader();
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;
  readonly #onData = (chunk: Buffer) => {
    this.#reader.push(chunk);
    this.#wake?.();
  };
  readonly #onEnd = () => {
    this.#ended = true;
    this.#wake?.();
  };
  readonly #onError = (err: Error) => {
    this.#error = err;
    this.#wake?.();
  };

  constructor(socket: Duplex) {
    this.#socket = socket;
    socket.on('data', this.#onData);
    socket.once('end', this.#onEnd);
    socket.once('close', this.#onEnd);
    socket.on('error', this.#onError);
    socket.resume();
  }

  /** Open a connection through `connector`. */
  static async open(connector: AdbServerConnector, deadline: Deadline = {}): Promise<HostConnection> {
    return new HostConnection(await connector.connect({ timeoutMs: DEFAULT_TIMEOUT, ...deadline }));
  }

  /** Write one request (`host:version`, `host:transport:SERIAL`, `shell,v2,raw:...`). */
  send(service: string): void {
    this.#socket.write(encodeHostRequest(service));
  }

  /** Wait for `OKAY`; a `FAIL` rejects with AdbFailError carrying adb's message. */
  async okay(deadline: Deadline, what: string): Promise<void> {
    await this.#until(() => this.#reader.readStatus(), deadline, what);
  }

  /** Wait for one length-prefixed payload. */
  string(deadline: Deadline, what: string): Promise<Buffer> {
    return this.#until(() => this.#reader.readString(), deadline, what);
  }

  /**
   * Everything until the server closes the connection; past `limit.maxBytes` the connection is
   * destroyed and the read fails with `limit.error()` (the bytes are never held past the cap).
   */
  rest(deadline: Deadline, what: string, limit?: { maxBytes: number; error: () => Error }): Promise<Buffer> {
    return this.#until(
      () => {
        if (limit !== undefined && this.#reader.buffered > limit.maxBytes) throw limit.error();
        return this.#ended ? this.#reader.takeRest() : undefined;
      },
      deadline,
      what,
      true,
    );
  }

  /**
   * Each payload of a stream of length-prefixed strings (`host:track-devices`) as it arrives. No
   * deadline: such a stream stays quiet for as long as nothing changes; it ends when it closes.
   */
  async *strings(): AsyncGenerator<Buffer> {
    for (;;) yield await this.#until(() => this.#reader.readString(), { timeoutMs: 0 }, 'read');
  }

  /** Stop reading and hand the socket over (paused, with unread bytes put back). */
  detach(): Duplex {
    const socket = this.#socket;
    socket.pause();
    socket.off('data', this.#onData);
    socket.off('end', this.#onEnd);
    socket.off('close', this.#onEnd);
    socket.off('error', this.#onError);
    const rest = this.#reader.takeRest();
    if (rest.length > 0) socket.unshift(rest);
    return socket;
  }

  destroy(): void {
    this.#socket.destroy();
  }

  /** Retry `attempt` whenever bytes arrive, until it yields, the stream ends or the deadline passes. */
  #until<T>(attempt: () => T | undefined, deadline: Deadline, what: string, atEnd = false): Promise<T> {
    const work = new Promise<T>((resolve, reject) => {
      const check = () => {
        try {
          const value = attempt();
          if (value !== undefined) {
            this.#wake = undefined;
            resolve(value);
            return;
          }
        } catch (err) {
          this.#wake = undefined;
          this.#socket.destroy();
          reject(err);
          return;
        }
        if (this.#error || (this.#ended && !atEnd)) {
          this.#wake = undefined;
          reject(this.#reader.failAtEnd() ?? this.#error ?? new Error('closed'));
        }
      };
      this.#wake = check;
      check();
    });
    return withDeadline(work, { timeoutMs: DEFAULT_TIMEOUT, ...deadline }, what, () =>
      this.#socket.destroy(),
    );
  }
}
