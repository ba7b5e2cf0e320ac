/**
 * adb's shell protocol (`shell,v2` streams, also `abb:`): packets of a 1-byte id, a 4-byte
 * little-endian length and the data. Pure codec shared by the host side (AdbClient) and the
 * simulator's device side; the decoder takes any split of the byte stream.
 */
export const SHELL_STDIN = 0;
export const SHELL_STDOUT = 1;
export const SHELL_STDERR = 2;
export const SHELL_EXIT = 3;
export const SHELL_CLOSE_STDIN = 4;
export const SHELL_WINDOW_SIZE = 5;

export const SHELL_HEADER_SIZE = 5;

export interface ShellPacket {
  id: number;
  data: Buffer;
}

export function encodeShellHeader(id: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(SHELL_HEADER_SIZE);
  header.writeUInt8(id, 0);
  header.writeUInt32LE(length, 1);
  return header;
}

export function encodeShellPacket(id: number, data: Uint8Array = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(SHELL_HEADER_SIZE + data.length);
  out[0] = id;
  out.writeUInt32LE(data.length, 1);
  out.set(data, SHELL_HEADER_SIZE);
  return out;
}

/** The exit packet: one byte, the exit status modulo 256. */
export function encodeShellExit(code: number): Buffer {
  return encodeShellPacket(SHELL_EXIT, Uint8Array.of(code & 0xff));
}

/** Incremental decoder; a packet longer than `maxPacket` means the stream is not what we think. */
export class ShellPacketDecoder {
  #pending: Buffer = Buffer.alloc(0);
  readonly #maxPacket: number;

  constructor(maxPacket = 16 * 1024 * 1024) {
    this.#maxPacket = maxPacket;
  }

  push(bytes: Uint8Array): ShellPacket[] {
    let buf =
      this.#pending.length === 0
        ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        : Buffer.concat([this.#pending, bytes]);
    const out: ShellPacket[] = [];
    while (buf.length >= SHELL_HEADER_SIZE) {
      const length = buf.readUInt32LE(1);
      if (length > this.#maxPacket)
        throw new Error(`shell packet of ${length} bytes exceeds ${this.#maxPacket}`);
      if (buf.length < SHELL_HEADER_SIZE + length) break;
      out.push({ id: buf[0]!, data: buf.subarray(SHELL_HEADER_SIZE, SHELL_HEADER_SIZE + length) });
      buf = buf.subarray(SHELL_HEADER_SIZE + length);
    }
    this.#pending = buf;
    return out;
  }

  get buffered(): number {
    return this.#pending.length;
  }
}
