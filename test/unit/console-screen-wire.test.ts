import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isLeaveKey,
  type KeyPress,
  keyMessage,
  parseAccessUnit,
  parseServerMessage,
  ScreenWireError,
  toPicture,
} from '../../src/console/client/screen-wire.ts';
import { parseKeyChord } from '../../src/protocol/helper/key-chord.ts';

/** A binary message as docs/live-screen.md lays it out. */
function unitMessage(key: boolean, pts: bigint, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(9 + data.length);
  out[0] = key ? 1 : 0;
  new DataView(out.buffer).setBigUint64(1, pts);
  out.set(data, 9);
  return out;
}

/** Throws only ScreenWireError, or nothing. */
function onlyWireErrors(f: () => unknown): void {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ScreenWireError);
  }
}

describe("console live screen: the bridge's messages", () => {
  it('an access unit: flag bit 0 is KEY, bytes 1–8 the PTS (big-endian µs), the rest Annex B', () => {
    const data = Uint8Array.of(0, 0, 0, 1, 0x65, 0x88);
    const m = parseAccessUnit(unitMessage(true, 0x0102030405n, data).buffer as ArrayBuffer);
    expect(m).toEqual({ key: true, pts: 0x0102030405, data });
    // Other flag bits are reserved: only bit 0 says key frame.
    const delta = unitMessage(false, 7n, data);
    delta[0] = 0xfe;
    expect(parseAccessUnit(delta).key).toBe(false);
  });

  it('an access unit round-trips for any flags, PTS below 2^53 and payload', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.bigInt({ min: 0n, max: BigInt(Number.MAX_SAFE_INTEGER) }),
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        (key, pts, data) => {
          const m = parseAccessUnit(unitMessage(key, pts, data));
          expect(m.key).toBe(key);
          expect(m.pts).toBe(Number(pts));
          expect([...m.data]).toEqual([...data]);
        },
      ),
    );
  });

  it('refuses an access unit with no payload or a PTS past 2^53, naming it', () => {
    expect(() => parseAccessUnit(new Uint8Array(9))).toThrow(/9 bytes/);
    expect(() => parseAccessUnit(unitMessage(true, 2n ** 60n, Uint8Array.of(1)))).toThrow(/2\^53/);
  });

  it('any bytes either parse or are refused as the wire error', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), (b) => onlyWireErrors(() => parseAccessUnit(b))));
  });

  it('reads start, skipped, end and error as documented', () => {
    const start = {
      type: 'start',
      codec: 'avc1.64001f',
      width: 720,
      height: 1280,
      displayWidth: 1080,
      displayHeight: 1920,
      source: 'agent',
    };
    expect(parseServerMessage(JSON.stringify(start))).toEqual(start);
    expect(parseServerMessage('{"type":"skipped","frames":12}')).toEqual({ type: 'skipped', frames: 12 });
    expect(parseServerMessage('{"type":"end","reason":"lease-ended","message":"released"}')).toEqual({
      type: 'end',
      reason: 'lease-ended',
      message: 'released',
    });
    expect(
      parseServerMessage('{"type":"error","code":"INVALID_ARGUMENT","message":"x out of range"}'),
    ).toEqual({
      type: 'error',
      code: 'INVALID_ARGUMENT',
      message: 'x out of range',
    });
  });

  it('refuses what is not the format, naming the field', () => {
    expect(() => parseServerMessage('nope')).toThrow(/not JSON/);
    expect(() => parseServerMessage('[1]')).toThrow(/unknown type/);
    expect(() => parseServerMessage('{"type":"start","codec":"vp8"}')).toThrow(/codec "vp8"/);
    expect(() =>
      parseServerMessage(
        '{"type":"start","codec":"avc1.42c01f","width":0,"height":1,"displayWidth":1,"displayHeight":1,"source":"agent"}',
      ),
    ).toThrow(/width must be/);
    expect(() => parseServerMessage('{"type":"end","reason":"bored"}')).toThrow(/reason "bored"/);
    expect(() => parseServerMessage('{"type":"skipped","frames":-1}')).toThrow(/frames/);
  });

  it('any text or JSON value either parses or is refused as the wire error', () => {
    fc.assert(fc.property(fc.string(), (s) => onlyWireErrors(() => parseServerMessage(s))));
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('start', 'skipped', 'end', 'error', 'x'), (v, type) => {
        onlyWireErrors(() => parseServerMessage(JSON.stringify(v)));
        if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
          onlyWireErrors(() => parseServerMessage(JSON.stringify({ ...v, type })));
        }
      }),
    );
  });
});

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

  it('every chord it sends is one POST /glass/key takes (the agent’s parser)', () => {
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
