/**
 * The live screen's WebSocket messages (docs/live-screen.md, "The WebSocket"): the binary packet
 * message (flags, presentation time, one Annex B access unit), the bridge's text messages as the
 * viewer reads them, and the shape of the viewer's input messages. Pure and browser-safe (no Node API): the bridge encodes, the typed client and
 * the console's browser script decode with these same functions.
 */

/** Bytes before the access unit in a binary message: flags (1) and the presentation time (8). */
export const PACKET_HEADER_BYTES = 9;
/** Bit 0 of the flags byte: the access unit is a key frame (with the SPS and PPS before it). */
export const FLAG_KEY_FRAME = 0x01;

/** One access unit as a binary message. */
export interface ScreenPacketMessage {
  key: boolean;
  /** Presentation time, microseconds. */
  pts: number;
  /** The Annex B access unit. */
  data: Uint8Array;
}

/**
 * The binary message of `packet`: `parts` are written one after the other as its access unit, which
 * is not empty.
 */
export function encodePacketMessage(key: boolean, pts: number, ...parts: Uint8Array[]): Uint8Array {
  if (!Number.isSafeInteger(pts) || pts < 0) throw new RangeError(`pts must be a whole number ≥ 0 (${pts})`);
  let length = 0;
  for (const part of parts) length += part.byteLength;
  if (length === 0) throw new RangeError('a packet message carries an access unit: not an empty access unit');
  const out = new Uint8Array(PACKET_HEADER_BYTES + length);
  writePacketMessageHeader(out, key, pts);
  let at = PACKET_HEADER_BYTES;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/**
 * The 9-byte header of a binary message into `out[0..9)` (flags, then the presentation time as a
 * big-endian 64-bit integer), for a caller that places the access unit after it itself.
 */
export function writePacketMessageHeader(out: Uint8Array, key: boolean, pts: number): void {
  if (!Number.isSafeInteger(pts) || pts < 0) throw new RangeError(`pts must be a whole number ≥ 0 (${pts})`);
  out[0] = key ? FLAG_KEY_FRAME : 0;
  const high = Math.floor(pts / 0x1_0000_0000);
  const low = pts - high * 0x1_0000_0000;
  out[1] = high >>> 24;
  out[2] = (high >>> 16) & 0xff;
  out[3] = (high >>> 8) & 0xff;
  out[4] = high & 0xff;
  out[5] = low >>> 24;
  out[6] = (low >>> 16) & 0xff;
  out[7] = (low >>> 8) & 0xff;
  out[8] = low & 0xff;
}

export class ScreenMessageError extends Error {}

/**
 * Read a binary message; throws `ScreenMessageError` when it has no access unit after its header. A
 * time past 2^53 − 1 µs (285 years) is read as 2^53 − 1: the largest a number holds exactly, and a
 * WebCodecs chunk's timestamp takes.
 */
export function decodePacketMessage(bytes: Uint8Array): ScreenPacketMessage {
  if (bytes.byteLength <= PACKET_HEADER_BYTES) {
    throw new ScreenMessageError(
      `a packet message is its ${PACKET_HEADER_BYTES}-byte header and an access unit: at least ${PACKET_HEADER_BYTES + 1} bytes, this one ${bytes.byteLength}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pts = view.getBigUint64(1);
  return {
    key: (bytes[0]! & FLAG_KEY_FRAME) !== 0,
    pts: pts > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(pts),
    data: bytes.subarray(PACKET_HEADER_BYTES),
  };
}

/** The `start` message: what a decoder needs and the display the input coordinates map to. */
export interface ScreenStartMessage {
  type: 'start';
  codec: string;
  width: number;
  height: number;
  displayWidth: number;
  displayHeight: number;
  source: 'agent' | 'screenrecord';
}

export type ScreenEndReason = 'lease-ended' | 'device-offline' | 'stream-failed' | 'going-away';
export const SCREEN_END_REASONS: readonly ScreenEndReason[] = [
  'lease-ended',
  'device-offline',
  'stream-failed',
  'going-away',
];

/** The bridge's text messages. */
export type ScreenTextMessage =
  | ScreenStartMessage
  | { type: 'skipped'; frames: number }
  | { type: 'end'; reason: ScreenEndReason; message: string }
  | { type: 'error'; code: string; message: string };

/**
 * The viewer's text messages to the bridge: a pointer in the picture's pixels, a key chord, text.
 * The bridge checks them against its input contract (src/api/screen.ts, `ScreenInputSchema`).
 */
export type ScreenInputMessage =
  | { type: 'pointer'; action: 'down' | 'move' | 'up' | 'cancel'; x: number; y: number }
  | { type: 'key'; key: string }
  | { type: 'text'; text: string };

const isDimension = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
/** The WebCodecs string of an H.264 stream: browsers take `avc1` in lower case only, the hex in either. */
const AVC_CODEC = /^avc1\.[0-9a-fA-F]{6}$/;

/** Read one of the bridge's text messages; throws `ScreenMessageError` naming what is wrong. */
export function parseScreenTextMessage(text: string): ScreenTextMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ScreenMessageError('a text message must be JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ScreenMessageError('a text message must be a JSON object');
  }
  const m = value as Record<string, unknown>;
  switch (m['type']) {
    case 'start': {
      const { codec, width, height, displayWidth, displayHeight, source } = m;
      if (typeof codec !== 'string' || !AVC_CODEC.test(codec))
        throw new ScreenMessageError('start: codec must be avc1.XXXXXX');
      for (const [name, v] of Object.entries({ width, height, displayWidth, displayHeight })) {
        if (!isDimension(v)) throw new ScreenMessageError(`start: ${name} must be a whole number > 0`);
      }
      if (source !== 'agent' && source !== 'screenrecord')
        throw new ScreenMessageError('start: source must be agent or screenrecord');
      return {
        type: 'start',
        codec,
        width: width as number,
        height: height as number,
        displayWidth: displayWidth as number,
        displayHeight: displayHeight as number,
        source,
      };
    }
    case 'skipped': {
      const frames = m['frames'];
      if (!Number.isSafeInteger(frames) || (frames as number) < 0)
        throw new ScreenMessageError('skipped: frames must be a whole number ≥ 0');
      return { type: 'skipped', frames: frames as number };
    }
    case 'end': {
      const reason = m['reason'];
      if (!SCREEN_END_REASONS.includes(reason as ScreenEndReason))
        throw new ScreenMessageError(`end: reason must be one of ${SCREEN_END_REASONS.join(', ')}`);
      return {
        type: 'end',
        reason: reason as ScreenEndReason,
        message: typeof m['message'] === 'string' ? m['message'] : '',
      };
    }
    case 'error': {
      if (typeof m['code'] !== 'string') throw new ScreenMessageError('error: code must be a string');
      return {
        type: 'error',
        code: m['code'],
        message: typeof m['message'] === 'string' ? m['message'] : '',
      };
    }
    default:
      throw new ScreenMessageError(`unknown message type ${JSON.stringify(m['type'])}`.slice(0, 200));
  }
}
