/**
 * The live screen's WebSocket messages as the console's viewer reads and writes them
 * (docs/live-screen.md): pure functions, no DOM, so they are tested in Node (test/unit/console-screen-wire.test.ts).
 * Bridge → viewer: text `start` / `skipped` / `end` / `error`, binary access units. Viewer → bridge:
 * `pointer` in the picture's pixels, `key` chords as POST /v1/leases/{id}/glass/key takes them, `text`.
 */

export interface ScreenStart {
  type: 'start';
  /** The WebCodecs codec string read from the SPS, e.g. `avc1.64001f`. */
  codec: string;
  width: number;
  height: number;
  displayWidth: number;
  displayHeight: number;
  source: 'agent' | 'screenrecord';
}
export interface ScreenSkipped {
  type: 'skipped';
  frames: number;
}
export const END_REASONS = ['lease-ended', 'device-offline', 'stream-failed', 'going-away'] as const;
export type ScreenEndReason = (typeof END_REASONS)[number];
export interface ScreenEnd {
  type: 'end';
  reason: ScreenEndReason;
  message: string;
}
export interface ScreenErrorMessage {
  type: 'error';
  code: string;
  message: string;
}
export type ScreenServerMessage = ScreenStart | ScreenSkipped | ScreenEnd | ScreenErrorMessage;

export type PointerAction = 'down' | 'move' | 'up';
export type ScreenInputMessage =
  | { type: 'pointer'; action: PointerAction; x: number; y: number }
  | { type: 'key'; key: string }
  | { type: 'text'; text: string };

/** One binary message: flags, presentation time (µs), the Annex B access unit. */
export interface AccessUnit {
  key: boolean;
  pts: number;
  data: Uint8Array;
}

/** A message from the bridge that is not the documented format; the view stops and says why. */
export class ScreenWireError extends Error {}

/** The largest picture side a `start` may announce (a bigger one is not a phone screen). */
export const MAX_PICTURE_SIDE = 16384;

const ACCESS_UNIT_HEADER = 9;

/** A binary message: byte 0 flags (bit 0 KEY_FRAME), bytes 1–8 the PTS in µs (big-endian, unsigned), then Annex B. */
export function parseAccessUnit(message: ArrayBuffer | Uint8Array): AccessUnit {
  const bytes = message instanceof Uint8Array ? message : new Uint8Array(message);
  if (bytes.length <= ACCESS_UNIT_HEADER) {
    throw new ScreenWireError(`an access unit message of ${bytes.length} bytes (the header alone is 9)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pts = view.getBigUint64(1);
  if (pts > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new ScreenWireError(`an access unit with presentation time ${pts} µs (past 2^53)`);
  }
  return {
    key: ((bytes[0] as number) & 1) === 1,
    pts: Number(pts),
    data: bytes.subarray(ACCESS_UNIT_HEADER),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const side = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) > 0 && (v as number) <= MAX_PICTURE_SIDE;
const CODEC = /^avc1\.[0-9a-fA-F]{6}$/;

/** A text message from the bridge. @throws ScreenWireError naming what is wrong with it */
export function parseServerMessage(text: string): ScreenServerMessage {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    throw new ScreenWireError('a text message that is not JSON');
  }
  if (!isObject(m)) throw new ScreenWireError('a text message that is not a JSON object');
  switch (m['type']) {
    case 'start': {
      const { codec, width, height, displayWidth, displayHeight, source } = m;
      if (typeof codec !== 'string' || !CODEC.test(codec)) {
        throw new ScreenWireError(
          `start: codec ${JSON.stringify(codec)} is not an H.264 codec string (avc1.PPCCLL)`,
        );
      }
      for (const [name, v] of Object.entries({ width, height, displayWidth, displayHeight })) {
        if (!side(v))
          throw new ScreenWireError(`start: ${name} must be an integer from 1 to ${MAX_PICTURE_SIDE}`);
      }
      if (source !== 'agent' && source !== 'screenrecord') {
        throw new ScreenWireError('start: source must be agent or screenrecord');
      }
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
      if (!Number.isInteger(frames) || (frames as number) < 0) {
        throw new ScreenWireError('skipped: frames must be a non-negative integer');
      }
      return { type: 'skipped', frames: frames as number };
    }
    case 'end': {
      const reason = m['reason'];
      if (!END_REASONS.includes(reason as ScreenEndReason)) {
        throw new ScreenWireError(
          `end: reason ${JSON.stringify(reason)} is not one of ${END_REASONS.join(', ')}`,
        );
      }
      return {
        type: 'end',
        reason: reason as ScreenEndReason,
        message: typeof m['message'] === 'string' ? m['message'] : '',
      };
    }
    case 'error':
      return {
        type: 'error',
        code: typeof m['code'] === 'string' ? m['code'] : 'UNKNOWN',
        message: typeof m['message'] === 'string' ? m['message'] : '',
      };
    default:
      throw new ScreenWireError(`a text message of unknown type ${JSON.stringify(m['type'])}`);
  }
}

/** Where the picture is drawn on the page: the canvas's CSS box (getBoundingClientRect). */
export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * A point on the page (CSS pixels, clientX / clientY) → the picture's pixel under it, clamped into
 * the picture (a drag may leave the canvas while the pointer is captured): 0 ≤ x < width.
 */
export function toPicture(
  clientX: number,
  clientY: number,
  box: Box,
  picture: { width: number; height: number },
): { x: number; y: number } {
  const along = (offset: number, extent: number, size: number) => {
    const v = extent > 0 ? Math.floor((offset / extent) * size) : 0;
    return Math.min(size - 1, Math.max(0, Number.isNaN(v) ? 0 : v));
  };
  return {
    x: along(clientX - box.left, box.width, picture.width),
    y: along(clientY - box.top, box.height, picture.height),
  };
}

/** The parts of a KeyboardEvent the mapping reads. */
export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
  metaKey: boolean;
  isComposing?: boolean;
}

/** KeyboardEvent.key of a non-printing key → the chord's key name (src/protocol/helper/key-chord.ts). */
const NAMED_KEYS: Readonly<Record<string, string>> = {
  Enter: 'enter',
  Backspace: 'backspace',
  Delete: 'delete',
  Tab: 'tab',
  Escape: 'escape',
  ArrowUp: 'up',
  ArrowDown: 'down',
  ArrowLeft: 'left',
  ArrowRight: 'right',
  Home: 'home',
  End: 'end',
  PageUp: 'pageup',
  PageDown: 'pagedown',
  Insert: 'insert',
  ContextMenu: 'menu',
  AudioVolumeUp: 'volumeup',
  AudioVolumeDown: 'volumedown',
  ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`F${i + 1}`, `f${i + 1}`])),
};

/** A printed character → the chord key it is on (for Ctrl / Alt / Meta + character). */
const CHARACTER_KEYS: Readonly<Record<string, string>> = {
  ' ': 'space',
  ',': 'comma',
  '.': 'period',
  '-': 'minus',
  '=': 'equals',
  '/': 'slash',
  ';': 'semicolon',
  "'": 'apostrophe',
  '\\': 'backslash',
  '`': 'grave',
  '[': 'leftbracket',
  ']': 'rightbracket',
};

/**
 * The keystroke that moves focus off the picture instead of going to the device (telnet's escape:
 * every other key, Tab included, goes to the device while the picture has focus).
 */
export const isLeaveKey = (e: KeyPress): boolean => e.ctrlKey && !e.altKey && !e.metaKey && e.key === ']';

/**
 * The message a keystroke on the focused picture sends: printable text as `text` (what the layout
 * produced, so `é` or `Ж` arrive as typed), named keys and modifier chords as `key`; null for what
 * is not sent (a lone modifier, an IME composition, a key the device has no code for).
 */
export function keyMessage(e: KeyPress): ScreenInputMessage | null {
  if (e.isComposing) return null;
  const chordModifiers = [e.ctrlKey && 'ctrl', e.altKey && 'alt', e.metaKey && 'meta'].filter(
    (m): m is string => typeof m === 'string',
  );
  const named = NAMED_KEYS[e.key];
  if (named !== undefined) {
    const mods = [...chordModifiers, ...(e.shiftKey ? ['shift'] : [])];
    return { type: 'key', key: [...mods, named].join('+') };
  }
  if ([...e.key].length !== 1) return null; // Shift, Control, Dead, Unidentified, …
  if (chordModifiers.length === 0) return { type: 'text', text: e.key };
  const lower = e.key.toLowerCase();
  const key = /^[a-z0-9]$/.test(lower) ? lower : CHARACTER_KEYS[e.key];
  if (key === undefined) return null;
  // Shift is in the chord for a letter (ctrl+shift+z); a shifted symbol is already the key it is on.
  const shift = e.shiftKey && /^[a-z]$/.test(lower) ? ['shift'] : [];
  return { type: 'key', key: [...chordModifiers, ...shift, key].join('+') };
}
