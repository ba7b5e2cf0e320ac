/**
 * The bridge's side of a glass line protocol (the glass contract): one connection to the agent or the a11y
 * service through a forward. Readiness is the `{"hello":{"proto":1}}` banner, never the connect (a
 * forward accepts connections with nothing listening and closes them). Every request carries an id
 * and its own deadline (30 s by default). A reply that is not a JSON object with an id the bridge
 * is waiting for — an id it never sent, the device's `-1` "malformed request", a line that is not
 * JSON — breaks the connection: every waiting request fails with a retryable
 * HELPER_PROTOCOL_ERROR and the caller reconnects. A dropped connection fails them with a
 * retryable UNAVAILABLE; a device refusal (`ok:false`) rejects that request alone.
 */
import { connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { ForwardEntry } from '../../adb/forward-ledger.ts';
import type { ForwardTarget } from '../../adb/forward-target.ts';
import { BridgeError, isBridgeError } from '../../errors.ts';
import {
  encodeGlassRequest,
  GLASS_BANNER,
  type GlassReply,
  MAX_REPLY_BYTES,
} from '../../protocol/glass/line-protocol.ts';
import { parseStrictJson } from '../../strict-json.ts';
import { type Attempt, type AttemptTransport, attemptOutcome } from '../attempt.ts';

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Tree replies nest two levels per node (object, children array); the service stops at 256 nodes deep. */
const MAX_REPLY_DEPTH = 1024;

interface Pending {
  op: string;
  resolve(reply: GlassReply): void;
  reject(err: BridgeError): void;
  timer: NodeJS.Timeout;
}

export interface GlassClientOptions {
  /** The component, for messages: `glass-agent`, `glass-a11y`. */
  component: string;
  /** How long to wait for the banner on one connection (default 1000 ms). */
  bannerTimeoutMs?: number;
}

export class GlassLineClient {
  readonly component: string;
  readonly #socket: Duplex;
  readonly #pending = new Map<number, Pending>();
  readonly #closeListeners: Array<(reason: BridgeError) => void> = [];
  #nextId = 1;
  #closed: BridgeError | null = null;

  private constructor(socket: Duplex, component: string) {
    this.#socket = socket;
    this.component = component;
  }

  /** Wait for the banner on `socket`; rejects (retryable) when the connection ends or stays silent. */
  static open(socket: Duplex, options: GlassClientOptions): Promise<GlassLineClient> {
    const client = new GlassLineClient(socket, options.component);
    return client.#start(options.bannerTimeoutMs ?? 1000);
  }

  get closed(): boolean {
    return this.#closed !== null;
  }

  /** Called once when the connection is gone (dropped, broken by a protocol error, or closed). */
  onClose(listener: (reason: BridgeError) => void): void {
    if (this.#closed) listener(this.#closed);
    else this.#closeListeners.push(listener);
  }

  /** Send `{"id":N,"op":op,...fields}` and resolve with the `ok:true` reply. */
  request(
    op: string,
    fields: Record<string, unknown> = {},
    options: { timeoutMs?: number } = {},
  ): Promise<GlassReply> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = this.#nextId++;
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return new Promise<GlassReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A late reply would carry an id nobody waits for: the connection cannot be trusted any more.
        this.#fail(
          new BridgeError('TIMEOUT', `${this.component} did not answer ${op} within ${timeoutMs} ms`, {
            details: { component: this.component, op, timeoutMs },
          }),
        );
      }, timeoutMs);
      this.#pending.set(id, { op, resolve, reject, timer });
      this.#socket.write(encodeGlassRequest(id, op, fields));
    });
  }

  close(): void {
    this.#fail(new BridgeError('UNAVAILABLE', `the connection to ${this.component} was closed`));
  }

  #start(bannerTimeoutMs: number): Promise<GlassLineClient> {
    return new Promise<GlassLineClient>((resolve, reject) => {
      let ready = false;
      const notReady = (why: string): void => {
        if (ready) return;
        ready = true;
        clearTimeout(timer);
        this.#socket.destroy();
        reject(new BridgeError('UNAVAILABLE', `${this.component} is not ready: ${why}`, { retryable: true }));
      };
      const timer = setTimeout(() => notReady(`no banner within ${bannerTimeoutMs} ms`), bannerTimeoutMs);
      const decoder = new StringDecoder('utf8');
      let buffer = '';
      this.#socket.on('data', (chunk: Buffer) => {
        buffer += decoder.write(chunk);
        if (buffer.length > MAX_REPLY_BYTES) {
          this.#protocolError(`a reply line is longer than ${MAX_REPLY_BYTES} bytes`);
          return;
        }
        for (let i = buffer.indexOf('\n'); i !== -1; i = buffer.indexOf('\n')) {
          const line = buffer.slice(0, i);
          buffer = buffer.slice(i + 1);
          if (!ready) {
            if (line !== GLASS_BANNER) {
              notReady(`it sent ${JSON.stringify(line.slice(0, 80))} instead of the banner`);
              return;
            }
            ready = true;
            clearTimeout(timer);
            resolve(this);
            continue;
          }
          this.#onLine(line);
          if (this.#closed) return;
        }
      });
      this.#socket.on('error', () => undefined);
      // The device side ending its stream ends the connection (adb streams have no half-close).
      const dropped = (): void => {
        notReady('the connection closed before the banner (nothing listening)');
        this.#fail(
          new BridgeError('UNAVAILABLE', `the connection to ${this.component} dropped`, {
            details: { component: this.component },
          }),
        );
      };
      this.#socket.on('end', dropped);
      this.#socket.on('close', dropped);
    });
  }

  #onLine(line: string): void {
    let reply: unknown;
    try {
      reply = parseStrictJson(line, { maxDepth: MAX_REPLY_DEPTH, maxBytes: MAX_REPLY_BYTES });
    } catch {
      this.#protocolError('a reply line is not JSON');
      return;
    }
    if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) {
      this.#protocolError('a reply is not a JSON object');
      return;
    }
    const r = reply as Record<string, unknown>;
    const id = r['id'];
    if (id === -1) {
      this.#protocolError(`${this.component} found a request line malformed (${String(r['error'] ?? '')})`);
      return;
    }
    const pending = typeof id === 'number' ? this.#pending.get(id) : undefined;
    if (pending === undefined) {
      this.#protocolError(
        `a reply carries id ${JSON.stringify(id)}, which the bridge did not send or no longer waits for`,
      );
      return;
    }
    this.#pending.delete(id as number);
    clearTimeout(pending.timer);
    if (r['ok'] === true) {
      pending.resolve(r as GlassReply);
      return;
    }
    const error = typeof r['error'] === 'string' ? r['error'] : 'no reason given';
    pending.reject(
      new BridgeError('HELPER_FAILED', `${this.component} refused ${pending.op}: ${error}`, {
        retryable: false,
        details: { component: this.component, op: pending.op, deviceError: error },
      }),
    );
  }

  #protocolError(why: string): void {
    this.#fail(
      new BridgeError('HELPER_PROTOCOL_ERROR', `${this.component} broke the protocol: ${why}; reconnecting`, {
        retryable: true,
        details: { component: this.component },
      }),
    );
  }

  /** Fail every waiting request with `reason` and drop the connection (once). */
  #fail(reason: BridgeError): void {
    if (this.#closed) return;
    this.#closed = reason;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      this.#pending.delete(id);
      pending.reject(reason);
    }
    this.#socket.destroy();
    for (const listener of this.#closeListeners.splice(0)) listener(reason);
  }
}

/**
 * How a glass component failed to start that the device caused (`details.startFailure`): its process
 * exited, it never listened on its socket, the a11y service never bound. Only these mean the device
 * cannot run the companion; anything else (a store or the adb server not answering) is passed on.
 */
export type StartFailure = 'exited' | 'never-ready' | 'never-bound';

export function startFailureOf(err: unknown): StartFailure | undefined {
  if (!isBridgeError(err)) return undefined;
  const value = err.details?.['startFailure'];
  return value === 'exited' || value === 'never-ready' || value === 'never-bound' ? value : undefined;
}

/** The glass companions, as attempts name them (`transport`). */
export type GlassCompanion = Extract<AttemptTransport, 'glass-agent' | 'glass-a11y'>;

/**
 * Connect and wait for the banner, again every `intervalMs` until `totalMs` has passed (defaults:
 * 200 ms and 5 s, as a freshly started agent or a just-enabled service needs a moment to listen).
 * Rejects with the last attempt's reason, naming the number of attempts; its `details.attempts`
 * lists each (`{transport: companion, outcome: ok or the failure's code, ms}`).
 */
export async function openWhenReady(
  connect: () => Promise<Duplex>,
  options: GlassClientOptions & {
    companion: GlassCompanion;
    intervalMs?: number;
    totalMs?: number;
    signal?: AbortSignal;
  },
): Promise<GlassLineClient> {
  const intervalMs = options.intervalMs ?? 200;
  const deadline = Date.now() + (options.totalMs ?? 5000);
  const attempts: Attempt[] = [];
  for (;;) {
    let last: unknown;
    const started = performance.now();
    try {
      return await GlassLineClient.open(await connect(), options);
    } catch (err) {
      last = err;
      attempts.push({
        transport: options.companion,
        outcome: attemptOutcome(err),
        ms: Math.round((performance.now() - started) * 100) / 100,
      });
    }
    if (options.signal?.aborted || Date.now() + intervalMs > deadline) {
      const why = last instanceof Error ? last.message : String(last);
      throw new BridgeError(
        'UNAVAILABLE',
        `${options.component} did not become ready after ${attempts.length} attempts: ${why}`,
        {
          retryable: true,
          details: {
            component: options.component,
            attempts,
            startFailure: 'never-ready' satisfies StartFailure,
          },
        },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A connection to a forward's local side (resolves once connected). */
export function connectForward(target: ForwardTarget): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(target);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** What a glass driver needs to reach its component: forwards owned by the lease. */
export interface GlassForwarder {
  forwardTarget(entry: ForwardEntry): ForwardTarget;
  openForward(owner: string, remote: string, deadline?: { timeoutMs?: number }): Promise<ForwardEntry>;
  closeForward(entry: ForwardEntry): Promise<void>;
  /** Whether the adb server still has the forward; one it lost is forgotten (not left stale). */
  checkForward(entry: ForwardEntry, deadline?: { timeoutMs?: number }): Promise<boolean>;
}

/**
 * A glass component's connection through a forward owned by `owner` (kept across reconnects):
 * ready once the banner came and `probe` answered; a failed probe closes the connection (the
 * components serve one client at a time, so a kept one would block every retry).
 *
 * A connection the forward's local side refuses (ECONNREFUSED, ENOENT: no listener there) means the
 * adb server may have lost the forward — its device's transport ended and came back, or the server
 * was restarted — while the component may be listening again on the device: the forward is checked
 * through the ledger and, when gone, forgotten and opened anew, and the connection tried through it.
 */
export class GlassEndpoint {
  readonly #device: GlassForwarder;
  readonly #owner: string;
  readonly #socketName: string;
  readonly #companion: GlassCompanion;
  #forward: ForwardEntry | null = null;
  #closed = false;

  constructor(device: GlassForwarder, owner: string, socketName: string, companion: GlassCompanion) {
    this.#device = device;
    this.#owner = owner;
    this.#socketName = socketName;
    this.#companion = companion;
  }

  async connect(
    probe: (client: GlassLineClient) => Promise<unknown>,
    /** `signal`: stop retrying (after the attempt in flight) once aborted. */
    options: { intervalMs: number; totalMs: number; signal?: AbortSignal },
  ): Promise<GlassLineClient> {
    await this.#open();
    const client = await openWhenReady(() => this.#connectOnce(), {
      component: this.#socketName,
      companion: this.#companion,
      ...options,
    });
    try {
      await probe(client);
    } catch (err) {
      client.close();
      throw err;
    }
    return client;
  }

  /** Remove the forward (idempotent); a forward an open in flight creates afterwards is removed too. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#forward === null) return;
    const forward = this.#forward;
    this.#forward = null;
    await this.#device.closeForward(forward);
  }

  async #open(): Promise<ForwardEntry> {
    if (this.#forward !== null) return this.#forward;
    if (this.#closed)
      throw new BridgeError('UNAVAILABLE', `the connection to ${this.#socketName} was closed`);
    const forward = await this.#device.openForward(this.#owner, `localabstract:${this.#socketName}`, {
      timeoutMs: 10_000,
    });
    if (this.#closed) {
      await this.#device.closeForward(forward);
      throw new BridgeError('UNAVAILABLE', `the connection to ${this.#socketName} was closed`);
    }
    this.#forward = forward;
    return forward;
  }

  /** One connection through the forward; refused: the forward is checked and, when gone, replaced. */
  async #connectOnce(): Promise<Duplex> {
    const forward = await this.#open();
    try {
      return await connectForward(this.#device.forwardTarget(forward));
    } catch (err) {
      if (await this.#device.checkForward(forward, { timeoutMs: 5000 })) throw err;
      if (this.#forward === forward) this.#forward = null;
      return connectForward(this.#device.forwardTarget(await this.#open()));
    }
  }
}
