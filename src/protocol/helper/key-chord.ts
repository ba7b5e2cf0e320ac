/**
 * Key chords of the glass agent (the glass contract): "+"-joined, case-insensitive, modifiers first and one
 * key last ("ctrl+a", "shift+tab", "enter", "f5", "ctrl+shift+z"). Pure: the simulator's agent
 * parses chords with it as the device's agent does, and the bridge's key API (issue #9) is to
 * validate a chord with it before sending; it accepts exactly what the Java agent accepts, with the
 * same refusal messages (test/unit/contract-glass-bridge.test.ts). Key codes and meta flags are
 * Android's `KeyEvent` constants (developer.android.com/reference/android/view/KeyEvent).
 */

export const META_SHIFT_ON = 0x1;
export const META_ALT_ON = 0x2;
export const META_CTRL_ON = 0x1000;
export const META_META_ON = 0x10000;

/** Modifier name → [meta flag, key code of its left key]. */
const MODIFIERS: ReadonlyMap<string, readonly [number, number]> = new Map([
  ['shift', [META_SHIFT_ON, 59]], // KEYCODE_SHIFT_LEFT
  ['alt', [META_ALT_ON, 57]], // KEYCODE_ALT_LEFT
  ['ctrl', [META_CTRL_ON, 113]], // KEYCODE_CTRL_LEFT
  ['control', [META_CTRL_ON, 113]],
  ['meta', [META_META_ON, 117]], // KEYCODE_META_LEFT
  ['cmd', [META_META_ON, 117]],
  ['super', [META_META_ON, 117]],
]);

const KEYS: ReadonlyMap<string, number> = new Map<string, number>([
  ...Array.from({ length: 26 }, (_, i): [string, number] => [String.fromCharCode(97 + i), 29 + i]), // KEYCODE_A..Z
  ...Array.from({ length: 10 }, (_, i): [string, number] => [String(i), 7 + i]), // KEYCODE_0..9
  ...Array.from({ length: 12 }, (_, i): [string, number] => [`f${i + 1}`, 131 + i]), // KEYCODE_F1..F12
  ['enter', 66],
  ['return', 66],
  ['tab', 61],
  ['space', 62],
  ['backspace', 67], // KEYCODE_DEL
  ['delete', 112], // KEYCODE_FORWARD_DEL
  ['del', 112],
  ['escape', 111],
  ['esc', 111],
  ['up', 19],
  ['down', 20],
  ['left', 21],
  ['right', 22],
  ['home', 122], // KEYCODE_MOVE_HOME
  ['end', 123], // KEYCODE_MOVE_END
  ['pageup', 92],
  ['pagedown', 93],
  ['insert', 124],
  ['back', 4],
  ['menu', 82],
  ['search', 84],
  ['volumeup', 24],
  ['volumedown', 25],
  ['power', 26],
  ['comma', 55],
  ['period', 56],
  ['minus', 69],
  ['equals', 70],
  ['slash', 76],
  ['semicolon', 74],
  ['apostrophe', 75],
  ['backslash', 73],
  ['grave', 68],
  ['leftbracket', 71],
  ['rightbracket', 72],
]);

export interface KeyChord {
  keyCode: number;
  /** KeyEvent META_* flags of the modifiers. */
  metaState: number;
  /** Key codes of the modifiers in the order given (pressed in order, released in reverse). */
  modifierKeyCodes: number[];
}

/** A chord the agent refuses; the message is the one the agent answers with. */
export class KeyChordError extends Error {}

/** Java's String.trim(): strips every char <= U+0020 at both ends. */
function javaTrim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 0x20) start++;
  while (end > start && s.charCodeAt(end - 1) <= 0x20) end--;
  return s.slice(start, end);
}

/** @throws KeyChordError naming the part that is not a known modifier or key */
export function parseKeyChord(chord: string): KeyChord {
  if (javaTrim(chord) === '') throw new KeyChordError('empty key chord');
  const parts = javaTrim(chord).toLowerCase().split('+');
  let metaState = 0;
  const modifierKeyCodes: number[] = [];
  for (const raw of parts.slice(0, -1)) {
    const part = javaTrim(raw);
    const modifier = MODIFIERS.get(part);
    if (modifier === undefined) {
      throw new KeyChordError(`unknown modifier "${part}" in key chord "${chord}"`);
    }
    if ((metaState & modifier[0]) !== 0) {
      throw new KeyChordError(`modifier "${part}" repeated in key chord "${chord}"`);
    }
    metaState |= modifier[0];
    modifierKeyCodes.push(modifier[1]);
  }
  const key = javaTrim(parts[parts.length - 1] as string);
  const keyCode = KEYS.get(key);
  if (keyCode === undefined) throw new KeyChordError(`unknown key "${key}" in key chord "${chord}"`);
  return { keyCode, metaState, modifierKeyCodes };
}
