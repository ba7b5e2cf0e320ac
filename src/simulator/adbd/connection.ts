/**
 * One device-side adb transport over a TCP socket: the CNXN handshake (or an AUTH challenge that is
 * never accepted), stream multiplexing (OPEN/OKAY/WRTE/CLSE) and the connection-level faults
 * (drop after N bytes, latency per message, bandwidth cap). Services live in ./services/.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
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
  deviceBanner,
  encodeHeader,
  MAX_PAYLOAD,
  MessageDecoder,
  serviceName,
} from '../../protocol/adb/transport-message.ts';
import type { FaultEffects, Faults, SimAndroid } from '../types.ts';

export { deviceBanner };

import { resolveService } from './services/index.ts';
import { ReverseRegistry } from './services/reverse.ts';
import { AdbStream, type StreamTransport } from './stream.ts';

/** Features a modern adbd (Android 12-13) advertises, limited to what the simulator serves. */
export const DEVICE_FEATURES: readonly string[] = [
  'shell_v2',
  'cmd',
  'stat_v2',
  'ls_v2',
  'fixed_push_mkdir',
  'apex',
  'abb',
  'fixed_push_symlink_timestamp',
  'abb_exec',
  'remount_shell',
];

export interface AdbdConnectionOptions {
  android: SimAndroid;
  /** Current faults; read on every use so they can change while connected. */
  faults: () => Faults;
  /** Answer CNXN with AUTH and never accept (like the `unauthorized` fault). */
  requireAuth?: boolean;
  features?: readonly string[];
  /** Called once the device answered CNXN (the host sees it as `device`). */
  onOnline?: () => void;
  /** Counted as the latency and bandwidth faults act on what the device sends. */
  effects?: FaultEffects;
}

export type ConnectionState = 'connecting' | 'unauthorized' | 'online' | 'closed';

const EMPTY = Buffer.alloc(0);

interface OutgoingItem {
  parts: Uint8Array[];
  readyAt: number;
  /** Held for the latency fault. */
  delayed: boolean;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class AdbdConnection implements StreamTransport {
  #socket: Socket;
  #options: AdbdConnectionOptions;
  #decoder = new MessageDecoder();
  #state: ConnectionState = 'connecting';
  #streams = new Map<number, AdbStream>();
  #nextLocalId = 1;
  #maxData = MAX_PAYLOAD;
  #withChecksum = true;
  #bytesSent = 0;
  #slowQueue: OutgoingItem[] = [];
  #slowWriting = false;
  #nextSendAt = 0;
  #closeHandlers: Array<() => void> = [];
  #version = A_VERSION;
  /** Streams this device opened towards the host (reverse connections) awaiting its `OKAY`. */
  #opening = new Map<number, (stream: AdbStream | undefined) => void>();
  readonly #reverses: ReverseRegistry;

  constructor(socket: Socket, options: AdbdConnectionOptions) {
    this.#socket = socket;
    this.#options = options;
    this.#reverses = new ReverseRegistry(options.android, this, 'host');
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#onSocketClosed());
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get maxData(): number {
    return this.#maxData;
  }

  /** Bytes written to the host so far (headers included). */
  get bytesSent(): number {
    return this.#bytesSent;
  }

  get streamCount(): number {
    return this.#streams.size;
  }

  onClose(handler: () => void): void {
    if (this.#state === 'closed') handler();
    else this.#closeHandlers.push(handler);
  }

  /** Drop the connection now (the host sees the transport go away). */
  close(): void {
    this.#socket.destroy();
  }

  /**
   * The user accepted the host's key: an `unauthorized` connection goes online (adbd sends its
   * CNXN then, on the same connection). No-op in any other state.
   */
  authorize(): void {
    if (this.#state !== 'unauthorized') return;
    this.#sendBanner(this.#version);
  }

  // --- StreamTransport ---

  send(command: number, arg0: number, arg1: number, data: Uint8Array = EMPTY): void {
    if (this.#state === 'closed' || this.#socket.destroyed) return;
    const header = encodeHeader(command, arg0, arg1, data, this.#withChecksum);
    const faults = this.#options.faults();
    const slow =
      faults.latencyMs !== undefined ||
      faults.bandwidthBytesPerSec !== undefined ||
      faults.dropAfterBytes !== undefined ||
      faults.stall === true;
    if (!slow && !this.#slowWriting) {
      const socket = this.#socket;
      socket.cork();
      socket.write(header);
      if (data.length > 0) socket.write(data);
      socket.uncork();
      this.#bytesSent += header.length + data.length;
      return;
    }
    this.#slowQueue.push({
      parts: data.length > 0 ? [header, data] : [header],
      readyAt: Date.now() + Math.max(0, faults.latencyMs ?? 0),
      delayed: (faults.latencyMs ?? 0) > 0,
    });
    if (!this.#slowWriting) void this.#drainSlowQueue();
  }

  release(localId: number): void {
    this.#streams.delete(localId);
    const opening = this.#opening.get(localId);
    this.#opening.delete(localId);
    opening?.(undefined);
  }

  /** OPEN a stream towards the host (what adbd does for each connection to a reverse). */
  openToHost(destination: string): Promise<AdbStream | undefined> {
    if (this.#state !== 'online') return Promise.resolve(undefined);
    const localId = this.#nextLocalId++;
    if (this.#nextLocalId > 0x7fffffff) this.#nextLocalId = 1;
    const stream = new AdbStream(this, localId, 0);
    this.#streams.set(localId, stream);
    return new Promise((resolve) => {
      this.#opening.set(localId, resolve);
      this.send(A_OPEN, localId, 0, Buffer.from(`${destination}\0`, 'utf8'));
    });
  }

  // --- faults on the way out ---

  async #drainSlowQueue(): Promise<void> {
    this.#slowWriting = true;
    try {
      for (;;) {
        const item = this.#slowQueue.shift();
        if (item === undefined || this.#socket.destroyed) break;
        const wait = item.readyAt - Date.now();
        if (wait > 0) await sleep(wait);
        // Stalled: the link stays up but nothing leaves the device until the fault is lifted.
        while (this.#options.faults().stall === true && !this.#socket.destroyed) await sleep(20);
        for (const part of item.parts) {
          if (!(await this.#writeLimited(part))) return;
        }
        if (item.delayed && this.#options.effects) this.#options.effects.delayedMessages += 1;
      }
    } finally {
      this.#slowWriting = false;
      this.#slowQueue = this.#socket.destroyed ? [] : this.#slowQueue;
    }
    if (this.#slowQueue.length > 0 && !this.#socket.destroyed) void this.#drainSlowQueue();
  }

  /** Write with the bandwidth cap and the byte budget; false once the connection was dropped. */
  async #writeLimited(bytes: Uint8Array): Promise<boolean> {
    let offset = 0;
    while (offset < bytes.length) {
      const socket = this.#socket;
      if (socket.destroyed) return false;
      const faults = this.#options.faults();
      const bandwidth = faults.bandwidthBytesPerSec;
      let slice = bytes.length - offset;
      if (bandwidth !== undefined && bandwidth > 0) {
        // Pace in slices of ~20 ms worth of bytes.
        slice = Math.min(slice, Math.max(512, Math.floor(bandwidth / 50)));
        const wait = this.#nextSendAt - Date.now();
        if (wait > 0) await sleep(wait);
      }
      const budget = faults.dropAfterBytes === undefined ? Infinity : faults.dropAfterBytes - this.#bytesSent;
      const piece = bytes.subarray(offset, offset + Math.min(slice, Math.max(0, budget)));
      if (piece.length > 0) {
        const flushed = socket.write(piece);
        this.#bytesSent += piece.length;
        offset += piece.length;
        if (bandwidth !== undefined && bandwidth > 0) {
          if (this.#options.effects) this.#options.effects.pacedBytes += piece.length;
          this.#nextSendAt = Math.max(this.#nextSendAt, Date.now()) + (piece.length * 1000) / bandwidth;
        }
        if (!flushed)
          await new Promise<void>((resolve) => socket.once('drain', resolve).once('close', resolve));
      }
      if (faults.dropAfterBytes !== undefined && this.#bytesSent >= faults.dropAfterBytes) {
        // The budget is spent: the link drops (FIN after the bytes already written).
        socket.end(() => socket.destroy());
        this.#markClosed();
        return false;
      }
    }
    return true;
  }

  // --- incoming ---

  #onData(chunk: Buffer): void {
    if (this.#state === 'closed') return;
    let messages: AdbMessage[];
    try {
      messages = this.#decoder.push(chunk);
    } catch {
      // Not an adb transport (bad magic, oversize payload): its state is unknown, drop it.
      this.#socket.destroy();
      return;
    }
    for (const message of messages) {
      if (this.state === 'closed') return;
      this.#handle(message);
    }
  }

  #handle(message: AdbMessage): void {
    switch (message.command) {
      case A_CNXN:
        this.#onConnect(message);
        return;
      case A_AUTH:
        if (this.#state !== 'unauthorized') return;
        if (message.arg0 === AUTH_SIGNATURE) {
          // The signature is never accepted: challenge again, like adbd with an unknown key.
          this.send(A_AUTH, AUTH_TOKEN, 0, randomBytes(20));
        }
        // AUTH_RSAPUBLICKEY: adbd would prompt the user; nobody ever taps "Allow".
        return;
    }
    if (this.#state !== 'online') return;
    switch (message.command) {
      case A_OPEN:
        this.#onOpen(message);
        return;
      case A_OKAY: {
        const stream = this.#streams.get(message.arg1);
        const opening = this.#opening.get(message.arg1);
        if (stream !== undefined && opening !== undefined && message.arg0 !== 0) {
          // The host accepted a stream this device opened.
          this.#opening.delete(message.arg1);
          stream.remoteId = message.arg0;
          opening(stream);
          return;
        }
        if (stream !== undefined && stream.remoteId === message.arg0) stream.handleOkay();
        return;
      }
      case A_WRTE: {
        const stream = this.#streams.get(message.arg1);
        if (stream !== undefined && stream.remoteId === message.arg0)
          stream.handleWrite(message.data as Buffer);
        return;
      }
      case A_CLSE: {
        const stream = this.#streams.get(message.arg1);
        if (stream !== undefined && (message.arg0 === 0 || stream.remoteId === message.arg0))
          stream.handleClose();
        return;
      }
      default:
        // STLS is never requested (we do not offer TLS); SYNC is obsolete. Ignore like adbd.
        return;
    }
  }

  #onConnect(message: AdbMessage): void {
    // A new CNXN resets the transport: every stream (and reverse) of the previous session is gone.
    this.#reverses.removeAll();
    for (const stream of [...this.#streams.values()]) stream.destroy(false);
    const version = Math.max(A_VERSION_MIN, Math.min(message.arg0 >>> 0, A_VERSION));
    const hostMax = message.arg1 >>> 0;
    this.#maxData = Math.max(1, Math.min(hostMax === 0 ? MAX_PAYLOAD : hostMax, MAX_PAYLOAD));
    // From here on both sides speak `version`; modern peers skip data_check.
    this.#withChecksum = version < A_VERSION_SKIP_CHECKSUM;
    this.#version = version;
    const faults = this.#options.faults();
    if (this.#options.requireAuth === true || faults.unauthorized === true) {
      this.#state = 'unauthorized';
      this.send(A_AUTH, AUTH_TOKEN, 0, randomBytes(20));
      return;
    }
    this.#sendBanner(version);
  }

  #sendBanner(version: number): void {
    const banner = deviceBanner(
      this.#options.android.bannerProps(),
      this.#options.features ?? DEVICE_FEATURES,
    );
    this.send(A_CNXN, version, this.#maxData, Buffer.from(banner, 'utf8'));
    this.#state = 'online';
    this.#options.onOnline?.();
  }

  #onOpen(message: AdbMessage): void {
    const remoteId = message.arg0;
    if (remoteId === 0) return;
    const name = serviceName(message.data);
    let start: ReturnType<typeof resolveService>;
    try {
      start = resolveService(name, {
        android: this.#options.android,
        maxData: this.#maxData,
        reverses: this.#reverses,
      });
    } catch {
      start = undefined;
    }
    if (start === undefined) {
      this.send(A_CLSE, 0, remoteId);
      return;
    }
    const localId = this.#nextLocalId++;
    if (this.#nextLocalId > 0x7fffffff) this.#nextLocalId = 1;
    const stream = new AdbStream(this, localId, remoteId);
    this.#streams.set(localId, stream);
    this.send(A_OKAY, localId, remoteId);
    try {
      start(stream);
    } catch {
      stream.destroy();
    }
  }

  #onSocketClosed(): void {
    this.#markClosed();
  }

  #markClosed(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    // The transport's reverses go with it, as on adbd.
    this.#reverses.removeAll();
    for (const stream of [...this.#streams.values()]) stream.destroy(false);
    this.#streams.clear();
    const handlers = this.#closeHandlers;
    this.#closeHandlers = [];
    for (const handler of handlers) handler();
  }
}
