/**
 * The glass agent's screen stream framing (docs/live-screen.md, "Device stream framing"), pure: a
 * 25-byte session header (`DBSC`, version 1, codec `h264`, video and display sizes), then packets of
 * a 12-byte header (flags and presentation time in one 64-bit word, payload length) and a payload.
 * All integers big-endian. `ScreenFrameDecoder` reads the stream incrementally over chunks cut
 * anywhere; bytes that break the framing throw a `ScreenProtocolError` naming the problem, after
 * which the stream's state is unknown (the caller closes it).
 */
import { BridgeError } from '../../errors.ts';

export const SCREEN_MAGIC = 'DBSC';
export const SCREEN_VERSION = 1;
export const SCREEN_CODEC = 'h264';
export const SESSION_HEADER_BYTES = 25;
export const PACKET_HEADER_BYTES = 12;
/** Largest payload accepted (16 MiB); more is a protocol error. */
export const MAX_SCREEN_PAYLOAD = 16 * 1024 * 1024;
/** A SIZE packet's payload: video width, video height, display width, display height. */
export const SIZE_PAYLOAD_BYTES = 16;
/** Largest presentation time (bits 0–60). */
export const MAX_SCREEN_PTS = 2n ** 61n - 1n;

const FLAG_CONFIG = 1n << 63n;
const FLAG_KEY = 1n << 62n;
const FLAG_SIZE = 1n << 61n;
/** The same flags and the pts bits in the word's high 32 bits. */
const HIGH_CONFIG = 0x8000_0000;
const HIGH_KEY = 0x4000_0000;
const HIGH_SIZE = 0x2000_0000;
const HIGH_PTS = 0x1fff_ffff;

const readUint32 = (b: Uint8Array, at: number): number =>
  (b[at] as number) * 0x100_0000 +
  (((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number));

/** What the framing can find wrong, for `ScreenProtocolError.problem`. */
export type ScreenProtocolProblem =
  | 'bad-magic'
  | 'bad-version'
  | 'bad-codec'
  | 'bad-size'
  | 'oversize-payload'
  | 'bad-flags';

export class ScreenProtocolError extends BridgeError {
  readonly problem: ScreenProtocolProblem;
  constructor(problem: ScreenProtocolProblem, message: string) {
    super('HELPER_PROTOCOL_ERROR', `screen stream: ${message}`, { details: { problem } });
    this.name = 'ScreenProtocolError';
    this.problem = problem;
  }
}

export interface ScreenSize {
  /** The encoded picture. */
  videoWidth: number;
  videoHeight: number;
  /** The display input coordinates are in. */
  displayWidth: number;
  displayHeight: number;
}

export interface SessionHeader extends ScreenSize {
  codec: 'h264';
}

export interface ScreenPacketHeader {
  config: boolean;
  key: boolean;
  size: boolean;
  /** Microseconds, 0 ≤ pts < 2^61 (a safe integer is enough for 71 years; larger is read as a number). */
  pts: number;
  length: number;
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const MAGIC_BYTES = ascii(SCREEN_MAGIC);
const CODEC_BYTES = ascii(SCREEN_CODEC);

function checkSide(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > 0xffffffff) {
    throw new RangeError(`${name} must be an integer from 1 to 2^32-1, not ${value}`);
  }
}

function checkSizes(size: ScreenSize): void {
  checkSide('videoWidth', size.videoWidth);
  checkSide('videoHeight', size.videoHeight);
  checkSide('displayWidth', size.displayWidth);
  checkSide('displayHeight', size.displayHeight);
}

function writeSizes(view: DataView, at: number, size: ScreenSize): void {
  view.setUint32(at, size.videoWidth);
  view.setUint32(at + 4, size.videoHeight);
  view.setUint32(at + 8, size.displayWidth);
  view.setUint32(at + 12, size.displayHeight);
}

function readSizes(view: DataView, at: number, what: string): ScreenSize {
  const size = {
    videoWidth: view.getUint32(at),
    videoHeight: view.getUint32(at + 4),
    displayWidth: view.getUint32(at + 8),
    displayHeight: view.getUint32(at + 12),
  };
  for (const [name, value] of Object.entries(size)) {
    if (value === 0) throw new ScreenProtocolError('bad-size', `${what} has ${name} 0`);
  }
  return size;
}

export function encodeSessionHeader(header: ScreenSize): Uint8Array {
  checkSizes(header);
  const out = new Uint8Array(SESSION_HEADER_BYTES);
  const view = new DataView(out.buffer);
  out.set(MAGIC_BYTES, 0);
  out[4] = SCREEN_VERSION;
  out.set(CODEC_BYTES, 5);
  writeSizes(view, 9, header);
  return out;
}

const printable = (bytes: Uint8Array) =>
  JSON.stringify(String.fromCharCode(...bytes).replace(/[^\x20-\x7e]/g, '?'));

/** The session header in the first 25 bytes of `bytes` (which must hold them). */
export function decodeSessionHeader(bytes: Uint8Array): SessionHeader {
  if (bytes.length < SESSION_HEADER_BYTES) {
    throw new RangeError(`a session header is ${SESSION_HEADER_BYTES} bytes, got ${bytes.length}`);
  }
  const magic = bytes.subarray(0, 4);
  if (MAGIC_BYTES.some((b, i) => magic[i] !== b)) {
    throw new ScreenProtocolError('bad-magic', `the stream starts ${printable(magic)}, not "DBSC"`);
  }
  if (bytes[4] !== SCREEN_VERSION) {
    throw new ScreenProtocolError(
      'bad-version',
      `version ${bytes[4]} (this bridge reads version ${SCREEN_VERSION})`,
    );
  }
  const codec = bytes.subarray(5, 9);
  if (CODEC_BYTES.some((b, i) => codec[i] !== b)) {
    throw new ScreenProtocolError('bad-codec', `codec ${printable(codec)} (this bridge reads "h264")`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, SESSION_HEADER_BYTES);
  return { codec: 'h264', ...readSizes(view, 9, 'the session header') };
}

export function encodePacketHeader(header: ScreenPacketHeader): Uint8Array {
  const { pts, length } = header;
  if (!Number.isSafeInteger(pts) || pts < 0)
    throw new RangeError(`pts must be a safe integer ≥ 0, not ${pts}`);
  if (!Number.isInteger(length) || length < 0 || length > MAX_SCREEN_PAYLOAD) {
    throw new RangeError(`payload length must be 0 to ${MAX_SCREEN_PAYLOAD}, not ${length}`);
  }
  let word = BigInt(pts);
  if (header.config) word |= FLAG_CONFIG;
  if (header.key) word |= FLAG_KEY;
  if (header.size) word |= FLAG_SIZE;
  const out = new Uint8Array(PACKET_HEADER_BYTES);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, word);
  view.setUint32(8, length);
  return out;
}

/** The packet header in the first 12 bytes of `bytes`; an oversize length is a protocol error. */
export function decodePacketHeader(bytes: Uint8Array): ScreenPacketHeader {
  if (bytes.length < PACKET_HEADER_BYTES) {
    throw new RangeError(`a packet header is ${PACKET_HEADER_BYTES} bytes, got ${bytes.length}`);
  }
  // The 64-bit word read as two 32-bit halves (no BigInt per packet): flags in the high half's top
  // three bits; pts = the rest, rounded once to a number exactly as Number(BigInt) would.
  const high = readUint32(bytes, 0);
  const low = readUint32(bytes, 4);
  const length = readUint32(bytes, 8);
  if (length > MAX_SCREEN_PAYLOAD) {
    throw new ScreenProtocolError(
      'oversize-payload',
      `a packet announces ${length} bytes of payload (at most ${MAX_SCREEN_PAYLOAD})`,
    );
  }
  const header = {
    config: (high & HIGH_CONFIG) !== 0,
    key: (high & HIGH_KEY) !== 0,
    size: (high & HIGH_SIZE) !== 0,
    pts: (high & HIGH_PTS) * 0x1_0000_0000 + low,
    length,
  };
  if (header.size && (header.config || header.key)) {
    throw new ScreenProtocolError('bad-flags', 'a SIZE packet is also flagged CONFIG or KEY_FRAME');
  }
  if (header.size && length !== SIZE_PAYLOAD_BYTES) {
    throw new ScreenProtocolError(
      'bad-size',
      `a SIZE packet carries ${length} bytes, not ${SIZE_PAYLOAD_BYTES}`,
    );
  }
  return header;
}

export function encodeSizePayload(size: ScreenSize): Uint8Array {
  checkSizes(size);
  const out = new Uint8Array(SIZE_PAYLOAD_BYTES);
  writeSizes(new DataView(out.buffer), 0, size);
  return out;
}

export function decodeSizePayload(bytes: Uint8Array): ScreenSize {
  if (bytes.length !== SIZE_PAYLOAD_BYTES) {
    throw new ScreenProtocolError('bad-size', `a SIZE payload is ${bytes.length} bytes, not 16`);
  }
  return readSizes(new DataView(bytes.buffer, bytes.byteOffset, SIZE_PAYLOAD_BYTES), 0, 'a SIZE packet');
}

/** One packet: header and payload bytes together (what the agent writes). */
export function encodeScreenPacket(
  flags: { config?: boolean; key?: boolean; size?: boolean },
  pts: number,
  payload: Uint8Array,
): Uint8Array {
  const header = encodePacketHeader({
    config: flags.config === true,
    key: flags.key === true,
    size: flags.size === true,
    pts,
    length: payload.length,
  });
  const out = new Uint8Array(PACKET_HEADER_BYTES + payload.length);
  out.set(header, 0);
  out.set(payload, PACKET_HEADER_BYTES);
  return out;
}

export type ScreenFrame =
  | { type: 'session'; header: SessionHeader }
  | { type: 'size'; pts: number; size: ScreenSize }
  | { type: 'packet'; config: boolean; key: boolean; pts: number; data: Uint8Array };

/**
 * The framing read over chunks cut anywhere: `push` answers the frames completed by a chunk. After
 * a thrown `ScreenProtocolError` the decoder refuses more input (the stream's state is unknown).
 */
export class ScreenFrameDecoder {
  #parts: Uint8Array[] = [];
  #buffered = 0;
  #session = false;
  #header: ScreenPacketHeader | null = null;
  #failed: ScreenProtocolError | null = null;

  /** Bytes held for an incomplete header or payload. */
  get buffered(): number {
    return this.#buffered;
  }

  /** Whether the session header has been read. */
  get started(): boolean {
    return this.#session;
  }

  push(chunk: Uint8Array): ScreenFrame[] {
    if (this.#failed) throw this.#failed;
    if (chunk.length > 0) {
      this.#parts.push(chunk);
      this.#buffered += chunk.length;
    }
    const out: ScreenFrame[] = [];
    try {
      for (;;) {
        if (!this.#session) {
          if (this.#buffered < SESSION_HEADER_BYTES) break;
          out.push({ type: 'session', header: decodeSessionHeader(this.#take(SESSION_HEADER_BYTES)) });
          this.#session = true;
          continue;
        }
        if (this.#header === null) {
          if (this.#buffered < PACKET_HEADER_BYTES) break;
          this.#header = decodePacketHeader(this.#take(PACKET_HEADER_BYTES));
        }
        const header = this.#header;
        if (this.#buffered < header.length) break;
        const data = this.#take(header.length);
        this.#header = null;
        if (header.size) out.push({ type: 'size', pts: header.pts, size: decodeSizePayload(data) });
        else out.push({ type: 'packet', config: header.config, key: header.key, pts: header.pts, data });
      }
    } catch (err) {
      if (err instanceof ScreenProtocolError) this.#failed = err;
      throw err;
    }
    return out;
  }

  /** The next `n` buffered bytes (copied only when they span chunks). */
  #take(n: number): Uint8Array {
    this.#buffered -= n;
    const first = this.#parts[0];
    if (n === 0) return new Uint8Array(0);
    if (first !== undefined && first.length >= n) {
      if (first.length === n) this.#parts.shift();
      else this.#parts[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const part = this.#parts[0] as Uint8Array;
      const used = Math.min(part.length, n - at);
      out.set(part.subarray(0, used), at);
      at += used;
      if (used === part.length) this.#parts.shift();
      else this.#parts[0] = part.subarray(used);
    }
    return out;
  }
}
