/**
 * The console's live view, what a person does on the picture → the viewer's input messages
 * (docs/live-screen.md): a pointer's page position → the picture's pixel under it, a keystroke →
 * `text` or a `key` chord as POST /v1/leases/{id}/keys takes it. Pure functions, no DOM, so
 * they are tested in Node (test/unit/console-screen-input.test.ts). The bridge's messages are read
 * with the protocol's parser (src/protocol/screen/viewer-messages.ts), as the typed client reads them.
 */
import type { ScreenInputMessage } from '../../protocol/screen/viewer-messages.ts';

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
