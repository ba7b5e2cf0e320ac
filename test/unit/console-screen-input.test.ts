/**
 * The console's live view: a pointer's page position → the picture's pixel, a keystroke → the input
 * message it sends (src/console/client/screen-input.ts). The bridge's messages are the protocol's
 * (test/unit/screen-viewer-messages.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScreenInputSchema } from '../../src/api/screen.ts';
import { isLeaveKey, type KeyPress, keyMessage, toPicture } from '../../src/console/client/screen-input.ts';
import { parseKeyChord } from '../../src/protocol/helper/key-chord.ts';

describe('console live screen: pointer mapping', () => {
  it('maps CSS pixels on the canvas to the picture’s pixels', () => {
    const box = { left: 100, top: 50, width: 360, height: 640 };
    const picture = { width: 720, height: 1280 };
    expect(toPicture(100, 50, box, picture)).toEqual({ x: 0, y: 0 });
    expect(toPicture(190, 370, box, picture)).toEqual({ x: 180, y: 640 });
    // The far edge and past it (a captured drag leaving the canvas) stay inside the picture.
    expect(toPicture(460, 690, box, picture)).toEqual({ x: 719, y: 1279 });
    expect(toPicture(-5000, 9000, box, picture)).toEqual({ x: 0, y: 1279 });
  });

  it('always lands inside the picture, and moves the same way as the pointer', () => {
    const finite = fc.double({ min: -1e5, max: 1e5, noNaN: true });
    fc.assert(
      fc.property(
        finite,
        finite,
        fc.record({
          left: finite,
          top: finite,
          width: fc.double({ min: 0, max: 1e4, noNaN: true }),
          height: fc.double({ min: 0, max: 1e4, noNaN: true }),
        }),
        fc.record({ width: fc.integer({ min: 1, max: 8192 }), height: fc.integer({ min: 1, max: 8192 }) }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (cx, cy, box, picture, dx) => {
          const p = toPicture(cx, cy, box, picture);
          for (const [v, size] of [
            [p.x, picture.width],
            [p.y, picture.height],
          ] as const) {
            expect(Number.isInteger(v)).toBe(true);
            expect(v).toBeGreaterThanOrEqual(0);
            expect(v).toBeLessThan(size);
          }
          expect(toPicture(cx + dx, cy, box, picture).x).toBeGreaterThanOrEqual(p.x);
        },
      ),
    );
  });
});

const press = (key: string, mods: Partial<KeyPress> = {}): KeyPress => ({
  key,
  ctrlKey: false,
  altKey: false,
  shiftKey: false,
  metaKey: false,
  ...mods,
});

describe('console live screen: keys', () => {
  it('printable text as text (as the layout produced it), named keys and chords as key', () => {
    expect(keyMessage(press('a'))).toEqual({ type: 'text', text: 'a' });
    expect(keyMessage(press('A', { shiftKey: true }))).toEqual({ type: 'text', text: 'A' });
    expect(keyMessage(press('é'))).toEqual({ type: 'text', text: 'é' });
    expect(keyMessage(press('😀'))).toEqual({ type: 'text', text: '😀' });
    expect(keyMessage(press(' '))).toEqual({ type: 'text', text: ' ' });
    expect(keyMessage(press('Enter'))).toEqual({ type: 'key', key: 'enter' });
    expect(keyMessage(press('Backspace'))).toEqual({ type: 'key', key: 'backspace' });
    expect(keyMessage(press('ArrowUp'))).toEqual({ type: 'key', key: 'up' });
    expect(keyMessage(press('Tab', { shiftKey: true }))).toEqual({ type: 'key', key: 'shift+tab' });
    expect(keyMessage(press('Escape'))).toEqual({ type: 'key', key: 'escape' });
    expect(keyMessage(press('F5'))).toEqual({ type: 'key', key: 'f5' });
    expect(keyMessage(press('a', { ctrlKey: true }))).toEqual({ type: 'key', key: 'ctrl+a' });
    expect(keyMessage(press('Z', { ctrlKey: true, shiftKey: true }))).toEqual({
      type: 'key',
      key: 'ctrl+shift+z',
    });
    expect(keyMessage(press(',', { ctrlKey: true }))).toEqual({ type: 'key', key: 'ctrl+comma' });
  });

  it('sends nothing for lone modifiers, dead keys, compositions and keys the device has no code for', () => {
    for (const key of ['Shift', 'Control', 'Alt', 'Meta', 'Dead', 'Unidentified', 'CapsLock']) {
      expect(keyMessage(press(key))).toBeNull();
    }
    expect(keyMessage(press('a', { isComposing: true }))).toBeNull();
    expect(keyMessage(press('é', { ctrlKey: true }))).toBeNull();
  });

  it('Ctrl+] is the way out of the picture, not a key for the device', () => {
    expect(isLeaveKey(press(']', { ctrlKey: true }))).toBe(true);
    expect(isLeaveKey(press(']'))).toBe(false);
    expect(isLeaveKey(press('Tab'))).toBe(false);
  });

  it('every message it sends is one the bridge takes: its input contract, the agent’s chord parser', () => {
    const keys = fc.oneof(
      fc.constantFrom(
        'Enter',
        'Backspace',
        'Delete',
        'Tab',
        'Escape',
        'ArrowLeft',
        'Home',
        'PageDown',
        'F12',
        'Insert',
        'ContextMenu',
        'AudioVolumeUp',
      ),
      fc.string({ minLength: 1, maxLength: 2 }),
      fc.constantFrom(',', '.', '-', '=', '/', ';', "'", '\\', '`', '[', ']', ' '),
    );
    fc.assert(
      fc.property(
        keys,
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (key, ctrlKey, altKey, shiftKey, metaKey) => {
          const m = keyMessage({ key, ctrlKey, altKey, shiftKey, metaKey });
          if (m === null) return;
          // The bridge's contract for a viewer's input takes it as it is.
          expect(ScreenInputSchema.parse(m)).toEqual(m);
          if (m.type === 'key') expect(() => parseKeyChord(m.key)).not.toThrow();
          else {
            expect(m.type).toBe('text');
            if (m.type === 'text') expect(m.text).toBe(key);
          }
        },
      ),
    );
  });
});
