/**
 * adb's shell protocol (shell_v2): packets of 1-byte id + 4-byte little-endian length + data.
 * Pure codec: the decoder takes any split of the byte stream.
 */
export const SHELL_STDIN = 0;
export const SHELL_STDOUT = 1;
export const SHELL_STDERR = 2;
export const SHELL_EXIT = 3;
export const SHELL_CLOSE_STDIN = 4;
export const SHELL_WINDOW_SIZE = 5;

export interface ShellPacket {
  id: number;
  data: Buffer;
}

export function encodeShellPacket(id: number, data: Uint8Array = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(5 + data.length);
  out[0] = id;
  out.writeUInt32LE(data.length, 1);
  out.set(data, 5);
  return out;
}

export class ShellV2Decoder {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  readonly #maxPacket: number;

  constructor(maxPacket = 16 * 1024 * 1024) {
    this.#maxPacket = maxPacket;
  }

  push(chunk: Buffer): ShellPacket[] {
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    const out: ShellPacket[] = [];
    if (this.#pendingBytes < 5) return out;
    let buf =
      this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending, this.#pendingBytes);
    let offset = 0;
    while (buf.length - offset >= 5) {
      const length = buf.readUInt32LE(offset + 1);
      if (length > this.#maxPacket)
        throw new Error(`shell packet of ${length} bytes exceeds ${this.#maxPacket}`);
      if (buf.length - offset < 5 + length) break;
      out.push({ id: buf[offset]!, data: buf.subarray(offset + 5, offset + 5 + length) });
      offset += 5 + length;
    }
    buf = buf.subarray(offset);
    this.#pending = buf.length > 0 ? [buf] : [];
    this.#pendingBytes = buf.length;
    return out;
  }

  get buffered(): number {
    return this.#pendingBytes;
  }
}
