/**
 * The device end of one adb stream (OPEN … CLSE) with adb's flow control: at most one `WRTE` in
 * flight towards the host until it answers `OKAY`; queued output is coalesced into payloads of up to
 * `maxdata` bytes. Incoming `WRTE`s go to the service's receiver and are acknowledged with `OKAY`
 * once the receiver is ready for more.
 */
import { A_CLSE, A_OKAY, A_WRTE } from '../../protocol/adb/transport-message.ts';

/** What a stream needs from its connection. */
export interface StreamTransport {
  send(command: number, arg0: number, arg1: number, data?: Uint8Array): void;
  readonly maxData: number;
  /** Forget the stream (after it is closed on either side). */
  release(localId: number): void;
}

/** Receives the host's bytes; the returned promise (if any) delays the `OKAY` that lets it send more. */
export type StreamReceiver = (data: Buffer) => void | Promise<void>;

const EMPTY = Buffer.alloc(0);

export class AdbStream {
  readonly localId: number;
  /** The host's id for the stream; 0 while a stream the device opened awaits the host's `OKAY`. */
  remoteId: number;
  #transport: StreamTransport;
  #queue: Uint8Array[] = [];
  #queuedBytes = 0;
  #inFlight = false;
  #pumpScheduled = false;
  #closing = false;
  #closed = false;
  #receiver: StreamReceiver | undefined;
  #pendingIn: Buffer[] = [];
  #drainWaiters: Array<() => void> = [];
  #closeHandlers: Array<() => void> = [];
  #abort = new AbortController();

  constructor(transport: StreamTransport, localId: number, remoteId: number) {
    this.#transport = transport;
    this.localId = localId;
    this.remoteId = remoteId;
  }

  /** Aborted when the stream closes (host `CLSE`, connection lost, or after our own close). */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes queued towards the host and not yet sent. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Set the receiver of the host's bytes; bytes that arrived before are delivered now. */
  setReceiver(receiver: StreamReceiver): void {
    this.#receiver = receiver;
    const pending = this.#pendingIn;
    this.#pendingIn = [];
    for (const data of pending) this.#deliver(data);
  }

  onClose(handler: () => void): void {
    if (this.#closed) handler();
    else this.#closeHandlers.push(handler);
  }

  /** Queue bytes for the host. Ignored after close. */
  write(data: Uint8Array): void {
    if (this.#closed || this.#closing || data.length === 0) return;
    this.#queue.push(data);
    this.#queuedBytes += data.length;
    // Coalesce what the service writes in one tick (a shell packet header and its data, a sync
    // DATA header, its bytes and DONE) into one WRTE instead of one round trip each.
    if (!this.#inFlight && !this.#pumpScheduled) {
      this.#pumpScheduled = true;
      queueMicrotask(() => {
        this.#pumpScheduled = false;
        this.#pump();
      });
    }
  }

  /** Resolves when nothing is queued beyond the one `WRTE` in flight (or the stream closed). */
  drained(): Promise<void> {
    if (this.#closed || this.#queuedBytes === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** Close after the queued output is delivered: sends `CLSE`. */
  close(): void {
    if (this.#closed || this.#closing) return;
    this.#closing = true;
    if (!this.#pumpScheduled) this.#maybeFinish();
  }

  /** Close now without flushing (connection lost or service failure). */
  destroy(sendClose = true): void {
    if (this.#closed) return;
    if (sendClose) this.#transport.send(A_CLSE, this.localId, this.remoteId);
    this.#finish();
  }

  // --- called by the connection ---

  /** Host `WRTE`. */
  handleWrite(data: Buffer): void {
    if (this.#closed) return;
    if (this.#receiver === undefined) this.#pendingIn.push(data);
    else this.#deliver(data);
  }

  /** Host `OKAY`: our in-flight `WRTE` was consumed. */
  handleOkay(): void {
    if (this.#closed) return;
    this.#inFlight = false;
    this.#pump();
  }

  /** Host `CLSE`: it forgot the stream already, no `CLSE` back. */
  handleClose(): void {
    this.#finish();
  }

  #deliver(data: Buffer): void {
    let result: void | Promise<void>;
    try {
      result = this.#receiver!(data);
    } catch {
      this.destroy();
      return;
    }
    if (result === undefined) {
      this.#ack();
    } else {
      result.then(
        () => this.#ack(),
        () => this.destroy(),
      );
    }
  }

  #ack(): void {
    if (!this.#closed) this.#transport.send(A_OKAY, this.localId, this.remoteId);
  }

  #pump(): void {
    if (this.#inFlight || this.#closed) return;
    if (this.#queuedBytes === 0) {
      this.#maybeFinish();
      return;
    }
    const payload = this.#takePayload(this.#transport.maxData);
    this.#inFlight = true;
    this.#transport.send(A_WRTE, this.localId, this.remoteId, payload);
    if (this.#queuedBytes === 0) this.#releaseDrainWaiters();
  }

  /** Up to `max` queued bytes: a view of the first chunk when it suffices, otherwise one copy. */
  #takePayload(max: number): Uint8Array {
    const first = this.#queue[0]!;
    if (first.length >= max || this.#queue.length === 1) {
      const n = Math.min(first.length, max);
      if (n === first.length) this.#queue.shift();
      else this.#queue[0] = first.subarray(n);
      this.#queuedBytes -= n;
      return first.subarray(0, n);
    }
    const size = Math.min(max, this.#queuedBytes);
    const out = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const chunk = this.#queue[0]!;
      const want = size - filled;
      if (chunk.length <= want) {
        out.set(chunk, filled);
        filled += chunk.length;
        this.#queue.shift();
      } else {
        out.set(chunk.subarray(0, want), filled);
        this.#queue[0] = chunk.subarray(want);
        filled += want;
      }
    }
    this.#queuedBytes -= size;
    return out;
  }

  #releaseDrainWaiters(): void {
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #maybeFinish(): void {
    if (this.#queuedBytes === 0 && !this.#inFlight) {
      this.#releaseDrainWaiters();
      if (this.#closing && !this.#closed) {
        this.#transport.send(A_CLSE, this.localId, this.remoteId, EMPTY);
        this.#finish();
      }
    }
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#pendingIn = [];
    this.#transport.release(this.localId);
    this.#abort.abort();
    this.#releaseDrainWaiters();
    const handlers = this.#closeHandlers;
    this.#closeHandlers = [];
    for (const handler of handlers) handler();
  }
}
