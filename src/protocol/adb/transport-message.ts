/**
 * adb transport messages (AOSP `protocol.txt`): a 24-byte little-endian header
 * `command, arg0, arg1, data_length, data_check, magic` followed by `data_length` payload bytes.
 * Pure codec: no I/O. `MessageDecoder` reassembles messages from any split of the byte stream.
 */
import { ChunkBuffer } from './chunk-buffer.ts';

export const A_SYNC = 0x434e5953;
export const A_CNXN = 0x4e584e43;
export const A_AUTH = 0x48545541;
export const A_OPEN = 0x4e45504f;
export const A_OKAY = 0x59414b4f;
export const A_CLSE = 0x45534c43;
export const A_WRTE = 0x45545257;
export const A_STLS = 0x534c5453;

/** Protocol version that stops computing `data_check` (adb ≥ 1.0.41 / Android P). */
export const A_VERSION_SKIP_CHECKSUM = 0x01000001;
export const A_VERSION_MIN = 0x01000000;
export const A_VERSION = 0x01000001;
/** Largest payload modern adbd accepts and offers in its CNXN (`MAX_PAYLOAD`). */
export const MAX_PAYLOAD = 1024 * 1024;
/** Payload limit of pre-N peers (`MAX_PAYLOAD_V1`). */
export const MAX_PAYLOAD_V1 = 4 * 1024;

/** `AUTH` sub-types (arg0). */
export const AUTH_TOKEN = 1;
export const AUTH_SIGNATURE = 2;
export const AUTH_RSAPUBLICKEY = 3;

export const HEADER_SIZE = 24;

const COMMAND_NAMES: Record<number, string> = {
  [A_SYNC]: 'SYNC',
  [A_CNXN]: 'CNXN',
  [A_AUTH]: 'AUTH',
  [A_OPEN]: 'OPEN',
  [A_OKAY]: 'OKAY',
  [A_CLSE]: 'CLSE',
  [A_WRTE]: 'WRTE',
  [A_STLS]: 'STLS',
};

export interface AdbMessage {
  command: number;
  arg0: number;
  arg1: number;
  data: Uint8Array;
}

/** The four-letter name of a command (`OPEN`), or its hex value when unknown. */
export function commandName(command: number): string {
  return COMMAND_NAMES[command] ?? `0x${(command >>> 0).toString(16).padStart(8, '0')}`;
}

/** Sum of the payload bytes, as adb computes `data_check` for pre-0x01000001 peers. */
export function dataChecksum(data: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < data.length; i++) sum += data[i]!;
  return sum >>> 0;
}

/**
 * The 24-byte header of a message. With `withChecksum` false (peers at version ≥ 0x01000001,
 * as modern adbd does) `data_check` is 0.
 */
export function encodeHeader(
  command: number,
  arg0: number,
  arg1: number,
  data: Uint8Array,
  withChecksum = false,
): Buffer {
  const header = Buffer.allocUnsafe(HEADER_SIZE);
  header.writeUInt32LE(command >>> 0, 0);
  header.writeUInt32LE(arg0 >>> 0, 4);
  header.writeUInt32LE(arg1 >>> 0, 8);
  header.writeUInt32LE(data.length, 12);
  header.writeUInt32LE(withChecksum ? dataChecksum(data) : 0, 16);
  header.writeUInt32LE((command ^ 0xffffffff) >>> 0, 20);
  return header;
}

/** Header and payload in one buffer (copies the payload; the connection writes them separately). */
export function encodeMessage(message: AdbMessage, withChecksum = false): Buffer {
  const header = encodeHeader(message.command, message.arg0, message.arg1, message.data, withChecksum);
  return Buffer.concat([header, message.data]);
}

export type MessageDecodeErrorCode = 'BAD_MAGIC' | 'PAYLOAD_TOO_LARGE' | 'BAD_CHECKSUM';

/** The byte stream is not an adb transport: the connection must be dropped (its state is unknown). */
export class MessageDecodeError extends Error {
  readonly code: MessageDecodeErrorCode;
  constructor(code: MessageDecodeErrorCode, message: string) {
    super(message);
    this.name = 'MessageDecodeError';
    this.code = code;
  }
}

export interface MessageDecoderOptions {
  /** Largest accepted `data_length`; default `MAX_PAYLOAD`. */
  maxPayload?: number;
}

/**
 * Incremental decoder. `push(bytes)` returns every message completed by those bytes. Payloads are
 * views into the pushed buffers when a payload arrives in one piece, otherwise one copy.
 * A non-zero `data_check` is verified (old peers); zero is accepted (modern peers skip it).
 * After a `MessageDecodeError` the decoder is unusable.
 */
export class MessageDecoder {
  readonly #bytes = new ChunkBuffer();
  #header: { command: number; arg0: number; arg1: number; length: number; check: number } | undefined;
  #maxPayload: number;
  #failed: MessageDecodeError | undefined;

  constructor(options: MessageDecoderOptions = {}) {
    this.#maxPayload = options.maxPayload ?? MAX_PAYLOAD;
  }

  get maxPayload(): number {
    return this.#maxPayload;
  }

  set maxPayload(value: number) {
    this.#maxPayload = value;
  }

  /** Bytes received but not yet part of a complete message. */
  get buffered(): number {
    return this.#bytes.length;
  }

  push(bytes: Uint8Array): AdbMessage[] {
    if (this.#failed) throw this.#failed;
    if (bytes.length > 0) {
      this.#bytes.append(bytes);
    }
    const out: AdbMessage[] = [];
    for (;;) {
      if (this.#header === undefined) {
        if (this.#bytes.length < HEADER_SIZE) break;
        const h = this.#bytes.take(HEADER_SIZE);
        const command = h.readUInt32LE(0);
        const magic = h.readUInt32LE(20);
        const length = h.readUInt32LE(12);
        if (magic !== (command ^ 0xffffffff) >>> 0) {
          this.#failed = new MessageDecodeError(
            'BAD_MAGIC',
            `bad magic 0x${magic.toString(16)} for command ${commandName(command)}`,
          );
          throw this.#failed;
        }
        if (length > this.#maxPayload) {
          this.#failed = new MessageDecodeError(
            'PAYLOAD_TOO_LARGE',
            `${commandName(command)} payload of ${length} bytes exceeds ${this.#maxPayload}`,
          );
          throw this.#failed;
        }
        this.#header = {
          command,
          arg0: h.readUInt32LE(4),
          arg1: h.readUInt32LE(8),
          length,
          check: h.readUInt32LE(16),
        };
      }
      const header = this.#header;
      if (this.#bytes.length < header.length) break;
      const data = header.length === 0 ? Buffer.alloc(0) : this.#bytes.take(header.length);
      if (header.check !== 0 && dataChecksum(data) !== header.check) {
        this.#failed = new MessageDecodeError(
          'BAD_CHECKSUM',
          `${commandName(header.command)} payload checksum mismatch (expected ${header.check})`,
        );
        throw this.#failed;
      }
      this.#header = undefined;
      out.push({ command: header.command, arg0: header.arg0, arg1: header.arg1, data });
    }
    return out;
  }
}

/** The service an `OPEN` names: its payload without the trailing NULs. */
export function serviceName(data: Uint8Array): string {
  let end = data.length;
  while (end > 0 && data[end - 1] === 0) end--;
  return Buffer.from(data.buffer, data.byteOffset, end).toString('utf8');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The service an `OPEN` names, decoded strictly: null when its bytes are not UTF-8. adb's service
 * names are text; a name with other bytes cannot be passed on as the same bytes through the adb
 * server's text host protocol, so the relay refuses it rather than forward a mangled name (a lossy
 * decode would turn each bad byte into U+FFFD, and two different names into one).
 */
export function strictServiceName(data: Uint8Array): string | null {
  let end = data.length;
  while (end > 0 && data[end - 1] === 0) end--;
  try {
    return strictUtf8.decode(data.subarray(0, end));
  } catch {
    return null;
  }
}

/** `device::ro.product.name=…;ro.product.model=…;ro.product.device=…;features=…` */
export function deviceBanner(props: Record<string, string>, features: readonly string[]): string {
  const parts = Object.entries(props).map(([key, value]) => `${key}=${value}`);
  parts.push(`features=${features.join(',')}`);
  return `device::${parts.join(';')}`;
}
