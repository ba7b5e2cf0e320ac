/**
 * `adb reverse` through a lease's adb endpoint. The client's `reverse:forward:tcp:X;tcp:Y` becomes
 * `reverse:forward:tcp:X;localfilesystem:S` on the leased device (through the bridge's adb server),
 * where S is a unix socket this module listens on inside a directory only the bridge's user may
 * enter (mode 0700, made by mkdtemp): a loopback TCP port would let any local process on the bridge
 * host reach the client's machine. Each connection the bridge's adb server makes to S (an app on the
 * device connected to X) is handed to `openToClient('tcp:Y', socket)`, which OPENs a stream towards
 * the client's adb server over the endpoint connection (its server then connects to its own
 * localhost:Y). `list-forward` shows the client's specs (X → Y), `killforward` and `killforward-all`
 * remove them on the device and close their listeners; `removeAll()` (the connection or the endpoint
 * closed) does the same for every reverse.
 *
 * A device port belongs to the device, not to one endpoint connection: when a second connection of
 * the same endpoint reverses a port another holds, the device now reaches the later one (adbd's
 * rebind), the earlier one forgets it, and the earlier one leaving does not remove it
 * (`ReverseClaims`, one per endpoint).
 *
 * Answers are what adbd writes on the stream: `OKAY` (plus the port for `tcp:0`), `FAIL` + 4 hex
 * digits + message, or for the list the length-prefixed text. Only `tcp:` specs are relayed.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../observability/logger.ts';
import { encodeFailure, encodeLengthPrefixed, tcpSpecPort } from '../protocol/adb/host-protocol.ts';
import { SocketDir } from './socket-dir.ts';

/** Reverses one endpoint connection may hold at once. */
export const MAX_REVERSES_PER_CONNECTION = 16;
/** The serial `adb reverse --list` shows (adbd shows its transport's). */
const LIST_SERIAL = 'devicebridge';
const DEVICE_ANSWER_MS = 15_000;
const MAX_DEVICE_ANSWER_BYTES = 64 * 1024;

export type ReverseRequest =
  | { kind: 'forward'; norebind: boolean; local: number; remote: number }
  | { kind: 'list' }
  | { kind: 'kill'; local: number }
  | { kind: 'kill-all' }
  | { kind: 'refused'; message: string };

function quoteSpec(spec: string): string {
  return JSON.stringify(spec.length > 64 ? `${spec.slice(0, 64)}…` : spec);
}

const TCP_ONLY = 'devicebridge: adb reverse through a lease endpoint relays tcp: specs only';

/** What a `reverse:…` service asks for (pure; never throws). */
export function parseReverseService(service: string): ReverseRequest {
  if (!service.startsWith('reverse:')) return { kind: 'refused', message: 'not a reverse service' };
  const request = service.slice('reverse:'.length);
  if (request === 'list-forward') return { kind: 'list' };
  if (request === 'killforward-all') return { kind: 'kill-all' };
  if (request.startsWith('killforward:')) {
    const spec = request.slice('killforward:'.length);
    const local = tcpSpecPort(spec, 0);
    if (local === undefined) return { kind: 'refused', message: `${TCP_ONLY} (got ${quoteSpec(spec)})` };
    return { kind: 'kill', local };
  }
  if (request.startsWith('forward:')) {
    let rest = request.slice('forward:'.length);
    const norebind = rest.startsWith('norebind:');
    if (norebind) rest = rest.slice('norebind:'.length);
    const semi = rest.indexOf(';');
    if (semi < 0) return { kind: 'refused', message: `malformed reverse spec ${quoteSpec(rest)}` };
    const localSpec = rest.slice(0, semi);
    const remoteSpec = rest.slice(semi + 1);
    const local = tcpSpecPort(localSpec, 0);
    if (local === undefined)
      return { kind: 'refused', message: `${TCP_ONLY} (device side ${quoteSpec(localSpec)})` };
    const remote = tcpSpecPort(remoteSpec, 1);
    if (remote === undefined)
      return { kind: 'refused', message: `${TCP_ONLY} (your side ${quoteSpec(remoteSpec)})` };
    return { kind: 'forward', norebind, local, remote };
  }
  return { kind: 'refused', message: `unknown reverse request ${quoteSpec(request)}` };
}

const OKAY = Buffer.from('OKAY', 'ascii');

/** The port in `OKAY` + `000512345` (adbd's answer to `tcp:0`); undefined when absent or malformed. */
export function resolvedPort(answer: Buffer): number | undefined {
  if (answer.length < 8 || answer.subarray(0, 4).toString('latin1') !== 'OKAY') return undefined;
  const len = Number.parseInt(answer.subarray(4, 8).toString('latin1'), 16);
  if (!Number.isInteger(len) || len < 1 || len > 5 || answer.length < 8 + len) return undefined;
  const text = answer.subarray(8, 8 + len).toString('latin1');
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** Everything the device writes on a one-shot service stream, bounded in size and time. */
function readAnswer(socket: Duplex): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the device did not answer in time'));
    }, DEVICE_ANSWER_MS);
    const done = (): void => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    };
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_DEVICE_ANSWER_BYTES) {
        clearTimeout(timer);
        socket.destroy();
        reject(new Error('the device answer is too long'));
        return;
      }
      chunks.push(chunk);
    });
    socket.once('end', done);
    socket.once('close', done);
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    // A detached host connection comes paused; it may even have ended already (a fast device).
    socket.resume();
    if (socket.readableEnded || socket.destroyed) setImmediate(done);
  });
}

/**
 * Which connection of one endpoint holds each device port now (one per endpoint), and the one queue
 * the endpoint's reverse requests run in: a device call and the claim it changes are never
 * interleaved with another connection's (a forward of X by one connection and the removal of X by
 * another reach the device in the order their claims change).
 */
export class ReverseClaims {
  readonly #holders = new Map<number, RelayReverses>();
  #chain: Promise<unknown> = Promise.resolve();

  /** Run `fn` after every request queued before it on this endpoint (failures do not stop the queue). */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** `by` holds `port` now; answers the connection that held it before, if another. */
  take(port: number, by: RelayReverses): RelayReverses | undefined {
    const before = this.#holders.get(port);
    this.#holders.set(port, by);
    return before === by ? undefined : before;
  }

  /** `by` gives `port` up; false when another connection holds it (then nothing changes). */
  release(port: number, by: RelayReverses): boolean {
    if (this.#holders.get(port) !== by) return false;
    this.#holders.delete(port);
    return true;
  }
}

export interface RelayReversesOptions {
  /** Open a service on the leased device (past the adb server's OKAY). */
  openDevice(service: string): Promise<Duplex>;
  /** A connection reached the bridge-local listener: relay it to the client's `destination`. */
  openToClient(destination: string, socket: net.Socket): void;
  /** The endpoint's claims on device ports (shared by its connections); a private one when absent. */
  claims?: ReverseClaims;
  logger?: Logger;
}

interface Reverse {
  remote: number;
  server: net.Server;
  sockets: Set<net.Socket>;
}

/** The reverses of one endpoint connection. */
export class RelayReverses {
  readonly #o: RelayReversesOptions;
  readonly #claims: ReverseClaims;
  readonly #byLocal = new Map<number, Reverse>();
  #closed = false;
  /** The private directory of this connection's sockets (made at the first reverse). */
  readonly #sockets = new SocketDir('devicebridge-reverse-');

  constructor(options: RelayReversesOptions) {
    this.#o = options;
    this.#claims = options.claims ?? new ReverseClaims();
  }

  /** Answer one `reverse:…` service as adbd would (one at a time per connection). */
  answer(service: string): Promise<Buffer> {
    return this.#serial(() => this.#answer(parseReverseService(service)));
  }

  /** Remove every reverse (device side and listeners); answers how many there were. Idempotent. */
  removeAll(): Promise<number> {
    this.#closed = true;
    return this.#serial(async () => {
      const locals = [...this.#byLocal.keys()];
      for (const local of locals) await this.#remove(local, true);
      await this.#sockets.remove();
      return locals.length;
    });
  }

  /** Another connection of the endpoint took `local` on the device: stop listening for it. */
  #lost(local: number): void {
    const entry = this.#byLocal.get(local);
    if (entry === undefined) return;
    this.#byLocal.delete(local);
    // Connections already relayed keep going; no new one can reach this listener.
    entry.server.close();
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.#claims.serial(fn);
  }

  async #answer(request: ReverseRequest): Promise<Buffer> {
    switch (request.kind) {
      case 'refused':
        return encodeFailure(request.message);
      case 'list':
        return encodeLengthPrefixed(
          [...this.#byLocal].map(([local, r]) => `${LIST_SERIAL} tcp:${local} tcp:${r.remote}\n`).join(''),
        );
      case 'kill':
        if (!this.#byLocal.has(request.local))
          return encodeFailure(`listener 'tcp:${request.local}' not found`);
        await this.#remove(request.local, false);
        return OKAY;
      case 'kill-all':
        for (const local of [...this.#byLocal.keys()]) await this.#remove(local, false);
        return OKAY;
      case 'forward':
        return this.#forward(request.local, request.remote, request.norebind);
    }
  }

  async #forward(local: number, remote: number, norebind: boolean): Promise<Buffer> {
    if (this.#closed) return encodeFailure('devicebridge: the endpoint connection is closing');
    const existing = local === 0 ? undefined : this.#byLocal.get(local);
    if (existing !== undefined) {
      if (norebind) return encodeFailure('cannot rebind existing socket');
      // The device already reaches our listener: only the client's destination changes.
      existing.remote = remote;
      return OKAY;
    }
    if (this.#byLocal.size >= MAX_REVERSES_PER_CONNECTION) {
      return encodeFailure(
        `devicebridge: at most ${MAX_REVERSES_PER_CONNECTION} reverses per endpoint connection`,
      );
    }
    const server = net.createServer({ pauseOnConnect: true });
    const entry: Reverse = { remote, server, sockets: new Set() };
    server.on('connection', (socket) => {
      entry.sockets.add(socket);
      socket.once('close', () => entry.sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      this.#o.openToClient(`tcp:${entry.remote}`, socket);
    });
    let socketPath: string;
    try {
      socketPath = await this.#sockets.next();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ path: socketPath, exclusive: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      return encodeFailure(`devicebridge: cannot listen for the reverse: ${(err as Error).message}`);
    }
    let answer: Buffer;
    try {
      const target = `localfilesystem:${socketPath}`;
      const service = `reverse:forward:${norebind ? 'norebind:' : ''}tcp:${local};${target}`;
      answer = await readAnswer(await this.#o.openDevice(service));
    } catch (err) {
      entry.server.close();
      return encodeFailure(`devicebridge: the device did not take the reverse: ${(err as Error).message}`);
    }
    if (answer.subarray(0, 4).toString('latin1') !== 'OKAY') {
      entry.server.close();
      return answer.length >= 4
        ? answer
        : encodeFailure('devicebridge: the device closed the reverse request');
    }
    const port = local === 0 ? resolvedPort(answer) : local;
    if (port === undefined) {
      entry.server.close();
      return encodeFailure('devicebridge: the device answered tcp:0 without a port');
    }
    this.#byLocal.set(port, entry);
    const before = this.#claims.take(port, this);
    if (before !== undefined) before.#lost(port);
    this.#o.logger?.info({ device: `tcp:${port}`, client: `tcp:${remote}` }, 'adb endpoint: reverse set');
    if (this.#closed) await this.#remove(port, true);
    return answer;
  }

  /** Remove on the device (a FAIL there means already gone), stop listening; `drop`: end its connections. */
  async #remove(local: number, drop: boolean): Promise<void> {
    const entry = this.#byLocal.get(local);
    if (entry === undefined) return;
    this.#byLocal.delete(local);
    entry.server.close();
    if (drop) for (const socket of entry.sockets) socket.destroy();
    // Another connection of the endpoint holds the device port now: its reverse stays.
    if (!this.#claims.release(local, this)) return;
    try {
      await readAnswer(await this.#o.openDevice(`reverse:killforward:tcp:${local}`));
    } catch (err) {
      // Device gone or offline: its adb server dropped the reverse with the transport.
      this.#o.logger?.info(
        { device: `tcp:${local}`, err: (err as Error).message },
        'adb endpoint: reverse removal',
      );
    }
  }
}
