/**
 * A lease's adb endpoint: a TCP listener speaking adbd's side of the adb transport protocol
 * (protocol/adb/transport-message.ts) to the client's own `adb connect`, relaying every stream the
 * client opens to the leased device through the bridge's adb server (`host:transport:SERIAL`, then
 * the service).
 *
 * AUTH: CNXN is answered with `AUTH TOKEN` (20 random bytes); only an `AUTH SIGNATURE` by the key
 * registered for the endpoint brings the connection online (a new token after each wrong one, the
 * connection dropped after a few); `AUTH RSAPUBLICKEY` is never a way in (adbd would ask a person).
 *
 * Flow control, per stream: device bytes go out as `WRTE` of at most the negotiated payload, one
 * at a time, the next only after the client's `OKAY` (the device socket is paused meanwhile); a
 * client `WRTE` is answered `OKAY` once its bytes were written to the device socket.
 *
 * `adb reverse` (relay-reverse.ts): each connection owns its reverses, as adbd's transport does;
 * a device-side connection to a reverse becomes a stream this endpoint OPENs towards the client.
 * They are removed when the connection or the endpoint closes.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../observability/logger.ts';
import { encodeFailure } from '../protocol/adb/host-protocol.ts';
import { isRelayedService, isReverseService, type PortRange } from '../protocol/adb/relay-policy.ts';
import {
  A_AUTH,
  A_CLSE,
  A_CNXN,
  A_OKAY,
  A_OPEN,
  A_VERSION,
  A_VERSION_MIN,
  A_VERSION_SKIP_CHECKSUM,
  A_WRTE,
  type AdbMessage,
  AUTH_SIGNATURE,
  AUTH_TOKEN,
  encodeHeader,
  MAX_PAYLOAD,
  MessageDecoder,
  strictServiceName,
} from '../protocol/adb/transport-message.ts';
import { type AdbPublicKey, verifyAdbAuthSignature } from './adb-public-key.ts';
import { RelayReverses, ReverseClaims } from './relay-reverse.ts';

/** Wrong signatures accepted on one connection before it is dropped (adb tries each of its keys). */
const MAX_AUTH_FAILURES = 10;
/** A connection must be online within this (adb's own handshake takes a few round trips). */
export const HANDSHAKE_MS = 5_000;
/** Default of `openAnswerMs`: a client's adb server answers an OPEN at once. */
export const OPEN_ANSWER_MS = 10_000;
/** Concurrent authenticated client connections per endpoint. */
export const ONLINE_CONNECTIONS = 8;
/**
 * Connections still in their handshake, per endpoint: a pool of their own, so that silent sockets
 * never take an authenticated client's place; when it is full, the oldest is dropped to make room
 * (the registered key's handshake takes milliseconds, a squatter's never ends).
 */
export const PRE_AUTH_CONNECTIONS = 4;
/** Concurrent streams per connection. */
const MAX_STREAMS = 256;
/**
 * Bytes a stream may have waiting for the device: a well-behaved client has one unacknowledged WRTE
 * in flight; one that keeps writing without our OKAY gets its stream closed, not the bridge's memory.
 */
export const MAX_UNACKED_TO_DEVICE = 4 * MAX_PAYLOAD;

export interface RelayEndpointOptions {
  /** The only key whose signatures are accepted. */
  key: AdbPublicKey;
  /** The CNXN banner (`device::…;features=…`) the client sees once authenticated. */
  banner: string;
  /** Open a service on the leased device (past the adb server's OKAY). */
  open(service: string): Promise<Duplex>;
  /**
   * Asked before each new connection and stream: false when the lease ended (e.g. fencing lost on
   * another node); the endpoint then closes itself.
   */
  alive?: () => Promise<boolean>;
  bindHost: string;
  ports: PortRange;
  /**
   * Set when `adb reverse` cannot work here (the adb server runs on another host: it would connect
   * to its own loopback, not the bridge's listener): every reverse request fails with this message.
   */
  reverseRefusal?: string;
  /**
   * How long a stream the endpoint opens towards the client (an `adb reverse` connection) waits for
   * the client's OKAY or CLSE before it is closed (default OPEN_ANSWER_MS).
   */
  openAnswerMs?: number;
  logger?: Logger;
}

export interface RelayCloseReport {
  connections: number;
  streams: number;
  /** Reverses removed (device side and bridge-local listener). */
  reverses: number;
}

/** Bind a listener on the first free port of the range (any free port for `{0, 0}`). */
async function listenInRange(server: net.Server, host: string, ports: PortRange): Promise<number> {
  const candidates: number[] = [];
  if (ports.from === 0) candidates.push(0);
  else {
    // Start at a random offset so endpoints opened together do not race for the same port.
    const span = ports.to - ports.from + 1;
    const start = Math.floor(Math.random() * span);
    for (let i = 0; i < span; i++) candidates.push(ports.from + ((start + i) % span));
  }
  let lastError: Error | undefined;
  for (const port of candidates) {
    try {
      await new Promise<void>((resolve, reject) => {
        const onError = (err: Error) => {
          server.off('listening', onListening);
          reject(err);
        };
        const onListening = () => {
          server.off('error', onError);
          resolve();
        };
        server.once('error', onError);
        server.once('listening', onListening);
        server.listen({ host, port, exclusive: true });
      });
      return (server.address() as net.AddressInfo).port;
    } catch (err) {
      lastError = err as Error;
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  throw lastError ?? new Error('no port');
}

export class AdbRelayEndpoint {
  readonly #o: RelayEndpointOptions;
  readonly #server: net.Server;
  readonly #connections = new Set<RelayConnection>();
  /** Connections still in their handshake, oldest first. */
  readonly #preAuth = new Set<RelayConnection>();
  #online = 0;
  readonly #reverseClaims = new ReverseClaims();
  #port = 0;
  #closed = false;
  /** Reverse removals under way (a connection closed), awaited by `close()`. */
  readonly #removals = new Set<Promise<number>>();
  #onClosed: Array<() => void> = [];

  private constructor(options: RelayEndpointOptions) {
    this.#o = options;
    this.#server = net.createServer({ pauseOnConnect: true }, (socket) => void this.#accept(socket));
  }

  static async listen(options: RelayEndpointOptions): Promise<AdbRelayEndpoint> {
    const endpoint = new AdbRelayEndpoint(options);
    endpoint.#port = await listenInRange(endpoint.#server, options.bindHost, options.ports);
    return endpoint;
  }

  get port(): number {
    return this.#port;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Streams open now, over all connections. */
  get openStreams(): number {
    let n = 0;
    for (const c of this.#connections) n += c.streamCount;
    return n;
  }

  /** Called once when the endpoint closes (by `close()` or because the lease ended). */
  onClose(handler: () => void): void {
    if (this.#closed) handler();
    else this.#onClosed.push(handler);
  }

  async #accept(socket: net.Socket): Promise<void> {
    if (this.#closed || !(await this.#isAlive())) {
      socket.destroy();
      if (!this.#closed) void this.close();
      return;
    }
    const connection = new RelayConnection(socket, this.#o, {
      beforeOpen: () => this.#isAlive(),
      leaseEnded: () => void this.close(),
      reversesRemoved: (removal) => {
        this.#removals.add(removal);
        void removal.finally(() => this.#removals.delete(removal));
      },
      reverseClaims: this.#reverseClaims,
      online: () => {
        this.#preAuth.delete(connection);
        if (this.#online >= ONLINE_CONNECTIONS) return false;
        this.#online += 1;
        return true;
      },
    });
    if (this.#preAuth.size >= PRE_AUTH_CONNECTIONS) {
      const oldest = this.#preAuth.values().next().value as RelayConnection;
      this.#preAuth.delete(oldest);
      oldest.destroy();
    }
    this.#connections.add(connection);
    this.#preAuth.add(connection);
    socket.once('close', () => {
      this.#connections.delete(connection);
      if (!this.#preAuth.delete(connection) && connection.wasOnline) this.#online -= 1;
    });
    socket.resume();
  }

  async #isAlive(): Promise<boolean> {
    if (this.#o.alive === undefined) return true;
    try {
      return await this.#o.alive();
    } catch {
      // The store did not answer: keep serving; teardown closes the endpoint when the lease ends.
      return true;
    }
  }

  /** Stop listening, drop every connection and every stream it relays. */
  async close(): Promise<RelayCloseReport> {
    const report = { connections: this.#connections.size, streams: this.openStreams, reverses: 0 };
    if (this.#closed) return { connections: 0, streams: 0, reverses: 0 };
    this.#closed = true;
    const stopped = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const connection of this.#connections) connection.destroy();
    this.#connections.clear();
    for (const removed of await Promise.all([...this.#removals].map((r) => r.catch(() => 0))))
      report.reverses += removed;
    await stopped;
    const handlers = this.#onClosed;
    this.#onClosed = [];
    for (const h of handlers) h();
    return report;
  }
}

interface ConnectionHooks {
  beforeOpen(): Promise<boolean>;
  leaseEnded(): void;
  /** The connection closed: its reverses are being removed (resolves with how many). */
  reversesRemoved(removal: Promise<number>): void;
  /** The endpoint's claims on device ports, shared by its connections. */
  reverseClaims: ReverseClaims;
  /** The connection signed in: whether it may go online (false: the endpoint is full). */
  online(): boolean;
}

const EMPTY = Buffer.alloc(0);

/** One client connection: the handshake, then stream multiplexing. */
class RelayConnection {
  readonly #socket: net.Socket;
  readonly #o: RelayEndpointOptions;
  readonly #hooks: ConnectionHooks;
  readonly #decoder = new MessageDecoder();
  readonly #streams = new Map<number, RelayStream>();
  #state: 'connecting' | 'auth' | 'online' | 'closed' = 'connecting';
  #token: Buffer = EMPTY;
  #authFailures = 0;
  /** Signed in once: holds one of the endpoint's online slots until it closes. */
  #admitted = false;
  #version = A_VERSION;
  #withChecksum = true;
  #maxData = MAX_PAYLOAD;
  #nextLocalId = 1;
  readonly #handshake: NodeJS.Timeout;
  readonly #reverses: RelayReverses;

  constructor(socket: net.Socket, options: RelayEndpointOptions, hooks: ConnectionHooks) {
    this.#socket = socket;
    this.#o = options;
    this.#hooks = hooks;
    this.#reverses = new RelayReverses({
      openDevice: (service) => options.open(service),
      openToClient: (destination, s) => this.#openToClient(destination, s),
      claims: hooks.reverseClaims,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#closed());
    this.#handshake = setTimeout(() => {
      if (this.#state !== 'online') socket.destroy();
    }, HANDSHAKE_MS);
    this.#handshake.unref();
  }

  get streamCount(): number {
    return this.#streams.size;
  }

  get wasOnline(): boolean {
    return this.#admitted;
  }

  get #isClosed(): boolean {
    return this.#state === 'closed';
  }

  get maxData(): number {
    return this.#maxData;
  }

  send(command: number, arg0: number, arg1: number, data: Uint8Array = EMPTY): void {
    if (this.#state === 'closed' || this.#socket.destroyed) return;
    const socket = this.#socket;
    socket.cork();
    socket.write(encodeHeader(command, arg0, arg1, data, this.#withChecksum));
    if (data.length > 0) socket.write(data);
    socket.uncork();
  }

  forget(localId: number): void {
    this.#streams.delete(localId);
  }

  destroy(): void {
    this.#socket.destroy();
    this.#closed();
  }

  #closed(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    clearTimeout(this.#handshake);
    for (const stream of [...this.#streams.values()]) stream.destroy(false);
    this.#streams.clear();
    // adbd drops a transport's reverses with it; here the device's and the bridge-local listeners.
    this.#hooks.reversesRemoved(this.#reverses.removeAll());
  }

  #nextId(): number {
    const localId = this.#nextLocalId++;
    if (this.#nextLocalId > 0x7fffffff) this.#nextLocalId = 1;
    return localId;
  }

  /** A device-side connection to a reverse: OPEN `destination` towards the client's adb server. */
  #openToClient(destination: string, socket: net.Socket): void {
    if (this.#state !== 'online' || this.#streams.size >= MAX_STREAMS) {
      socket.destroy();
      return;
    }
    const localId = this.#nextId();
    const stream = new RelayStream(this, localId, 0);
    stream.awaitOpen(socket, this.#o.openAnswerMs ?? OPEN_ANSWER_MS);
    this.#streams.set(localId, stream);
    this.send(A_OPEN, localId, 0, Buffer.from(`${destination}\0`, 'utf8'));
  }

  /** OKAY/WRTE/CLSE back on a stream answered at once (reverse requests): not tracked. */
  async #answerReverse(service: string, remoteId: number): Promise<void> {
    const localId = this.#nextId();
    this.send(A_OKAY, localId, remoteId);
    let answer: Buffer;
    if (!(await this.#hooks.beforeOpen())) {
      this.#hooks.leaseEnded();
      return;
    }
    try {
      answer =
        this.#o.reverseRefusal === undefined
          ? await this.#reverses.answer(service)
          : encodeFailure(this.#o.reverseRefusal);
    } catch (err) {
      answer = Buffer.from(`FAIL0000`);
      this.#o.logger?.info({ err: (err as Error).message }, 'adb endpoint: reverse failed');
    }
    for (let at = 0; at < answer.length; at += this.#maxData)
      this.send(A_WRTE, localId, remoteId, answer.subarray(at, at + this.#maxData));
    this.send(A_CLSE, localId, remoteId);
  }

  #onData(chunk: Buffer): void {
    if (this.#state === 'closed') return;
    let messages: AdbMessage[];
    try {
      messages = this.#decoder.push(chunk);
    } catch {
      // Not an adb transport: its state is unknown, drop it.
      this.destroy();
      return;
    }
    for (const message of messages) {
      if (this.#isClosed) return;
      this.#handle(message);
    }
  }

  #handle(message: AdbMessage): void {
    switch (message.command) {
      case A_CNXN:
        this.#onConnect(message);
        return;
      case A_AUTH:
        this.#onAuth(message);
        return;
    }
    if (this.#state !== 'online') return;
    switch (message.command) {
      case A_OPEN:
        void this.#onOpen(message);
        return;
      case A_OKAY: {
        const stream = this.#streams.get(message.arg1);
        if (stream === undefined) {
          // As adb does: an OKAY for a stream we no longer have (e.g. closed by the open timeout
          // just before the client accepted it) is answered CLSE so the client closes its side.
          if (message.arg0 !== 0) this.send(A_CLSE, 0, message.arg0);
          return;
        }
        // The client accepted a stream the endpoint opened (a reverse connection).
        if (stream.remoteId === 0 && message.arg0 !== 0) stream.opened(message.arg0);
        else if (stream.remoteId === message.arg0) stream.handleOkay();
        return;
      }
      case A_WRTE: {
        const stream = this.#streams.get(message.arg1);
        if (stream !== undefined && stream.remoteId === message.arg0) stream.handleWrite(message.data);
        return;
      }
      case A_CLSE: {
        // arg1 0: the client closed a stream we have not answered yet (it knows only its own id).
        const stream =
          message.arg1 === 0
            ? [...this.#streams.values()].find((s) => s.remoteId === message.arg0 && !s.attached)
            : this.#streams.get(message.arg1);
        if (stream !== undefined && (message.arg0 === 0 || stream.remoteId === message.arg0))
          stream.destroy(false);
        return;
      }
      default:
        // STLS is never offered; SYNC is obsolete: ignore, as adbd does.
        return;
    }
  }

  #onConnect(message: AdbMessage): void {
    // A new CNXN resets the transport (and authentication): every stream is gone.
    for (const stream of [...this.#streams.values()]) stream.destroy(false);
    this.#version = Math.max(A_VERSION_MIN, Math.min(message.arg0 >>> 0, A_VERSION));
    const hostMax = message.arg1 >>> 0;
    this.#maxData = Math.max(1, Math.min(hostMax === 0 ? MAX_PAYLOAD : hostMax, MAX_PAYLOAD));
    this.#withChecksum = this.#version < A_VERSION_SKIP_CHECKSUM;
    this.#state = 'auth';
    this.#challenge();
  }

  #challenge(): void {
    this.#token = randomBytes(20);
    this.send(A_AUTH, AUTH_TOKEN, 0, this.#token);
  }

  #onAuth(message: AdbMessage): void {
    if (this.#state !== 'auth') return;
    // AUTH RSAPUBLICKEY (the client offering a new key) is not a way in: ignored, like a prompt
    // nobody answers; the connection stays unauthorized until the handshake deadline.
    if (message.arg0 !== AUTH_SIGNATURE) return;
    if (verifyAdbAuthSignature(this.#o.key.key, this.#token, message.data)) {
      this.#token = EMPTY;
      clearTimeout(this.#handshake);
      if (!this.#admitted) {
        if (!this.#hooks.online()) {
          this.#o.logger?.info(
            { limit: ONLINE_CONNECTIONS },
            'adb endpoint: connection refused: every online slot is taken',
          );
          this.destroy();
          return;
        }
        this.#admitted = true;
      }
      this.#state = 'online';
      this.send(A_CNXN, this.#version, this.#maxData, Buffer.from(this.#o.banner, 'utf8'));
      return;
    }
    this.#authFailures++;
    if (this.#authFailures >= MAX_AUTH_FAILURES) {
      this.destroy();
      return;
    }
    this.#challenge();
  }

  async #onOpen(message: AdbMessage): Promise<void> {
    const remoteId = message.arg0;
    if (remoteId === 0) return;
    const service = strictServiceName(message.data);
    if (service === null) {
      // Not text: refused (CLSE), never forwarded mangled. Logged as hex, bounded.
      this.#o.logger?.info(
        { serviceHex: Buffer.from(message.data.subarray(0, 64)).toString('hex') },
        'adb endpoint: service refused: its name is not UTF-8',
      );
      this.send(A_CLSE, 0, remoteId);
      return;
    }
    if (isReverseService(service)) {
      // Answered by the endpoint as adbd answers it (OKAY, the answer, CLSE): relay-reverse.ts.
      void this.#answerReverse(service, remoteId);
      return;
    }
    if (!isRelayedService(service) || this.#streams.size >= MAX_STREAMS) {
      this.#o.logger?.info({ service: service.slice(0, 64) }, 'adb endpoint: service refused');
      this.send(A_CLSE, 0, remoteId);
      return;
    }
    const localId = this.#nextId();
    const stream = new RelayStream(this, localId, remoteId);
    this.#streams.set(localId, stream);
    let socket: Duplex;
    try {
      if (!(await this.#hooks.beforeOpen())) {
        this.#hooks.leaseEnded();
        return;
      }
      socket = await this.#o.open(service);
    } catch (err) {
      this.#o.logger?.info(
        { service: service.slice(0, 64), err: (err as Error).message },
        'adb endpoint: device refused the service',
      );
      this.#streams.delete(localId);
      this.send(A_CLSE, 0, remoteId);
      return;
    }
    if (this.#isClosed || !this.#streams.has(localId)) {
      socket.destroy();
      return;
    }
    this.send(A_OKAY, localId, remoteId);
    stream.attach(socket);
  }
}

/** One relayed stream: the client's stream `remoteId` ↔ one adb server socket on the device. */
class RelayStream {
  readonly #connection: RelayConnection;
  readonly localId: number;
  /** The client's id; 0 while a stream the endpoint opened awaits the client's OKAY. */
  remoteId: number;
  #socket: Duplex | undefined;
  /** The socket of a stream the endpoint opened, until the client accepts it. */
  #opening: Duplex | undefined;
  #openTimer: NodeJS.Timeout | undefined;
  #pending: Buffer[] = [];
  #awaitingOkay = false;
  #ended = false;
  #done = false;

  constructor(connection: RelayConnection, localId: number, remoteId: number) {
    this.#connection = connection;
    this.localId = localId;
    this.remoteId = remoteId;
  }

  /** Whether the device side is open (the client was answered OKAY). */
  get attached(): boolean {
    return this.#socket !== undefined;
  }

  /**
   * The endpoint OPENed this stream for `socket` (paused until the client accepts); without the
   * client's OKAY or CLSE within `answerMs` the stream is closed (CLSE) and `socket` destroyed.
   */
  awaitOpen(socket: Duplex, answerMs: number): void {
    this.#opening = socket;
    this.#openTimer = setTimeout(() => this.destroy(true), answerMs);
    this.#openTimer.unref();
  }

  /** The client accepted the stream the endpoint opened. */
  opened(remoteId: number): void {
    const socket = this.#opening;
    if (socket === undefined || this.#done) return;
    clearTimeout(this.#openTimer);
    this.#opening = undefined;
    this.remoteId = remoteId;
    this.attach(socket);
  }

  attach(socket: Duplex): void {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      socket.pause();
      const max = this.#connection.maxData;
      for (let at = 0; at < chunk.length; at += max) this.#pending.push(chunk.subarray(at, at + max));
      this.#pump();
    });
    socket.once('end', () => {
      this.#ended = true;
      this.#pump();
    });
    socket.once('close', () => {
      this.#ended = true;
      this.#pump();
    });
    socket.on('error', () => socket.destroy());
    socket.resume();
  }

  /** Send the next device chunk when the client acknowledged the previous one; CLSE after the last. */
  #pump(): void {
    if (this.#done || this.#awaitingOkay) return;
    const next = this.#pending.shift();
    if (next !== undefined) {
      this.#awaitingOkay = true;
      this.#connection.send(A_WRTE, this.localId, this.remoteId, next);
      return;
    }
    if (this.#ended) {
      this.destroy(true);
      return;
    }
    this.#socket?.resume();
  }

  handleOkay(): void {
    this.#awaitingOkay = false;
    this.#pump();
  }

  handleWrite(data: Uint8Array): void {
    const socket = this.#socket;
    if (socket === undefined || this.#done) return;
    if (socket.writableLength + data.length > MAX_UNACKED_TO_DEVICE) {
      this.destroy(true);
      return;
    }
    socket.write(data, (err) => {
      if (err) this.destroy(true);
      else if (!this.#done) this.#connection.send(A_OKAY, this.localId, this.remoteId);
    });
  }

  /** Close the device side; `notify`: tell the client (CLSE) — not when it closed the stream itself. */
  destroy(notify: boolean): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#openTimer);
    this.#pending = [];
    this.#socket?.destroy();
    this.#opening?.destroy();
    this.#connection.forget(this.localId);
    if (notify) this.#connection.send(A_CLSE, this.localId, this.remoteId);
  }
}
