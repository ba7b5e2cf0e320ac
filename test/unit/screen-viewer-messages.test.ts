/**
 * The live screen's viewer messages (src/protocol/screen/viewer-messages.ts: the one parser the
 * bridge, the typed client and the console's browser script use) and the viewer's input contract
 * (src/api/screen.ts): golden bytes from docs/live-screen.md, and properties over any input (a
 * parser of outside bytes never throws anything but its own error; encode then decode is the
 * identity).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScreenInputSchema } from '../../src/api/screen.ts';
import {
  decodePacketMessage,
  encodePacketMessage,
  parseScreenTextMessage,
  ScreenMessageError,
} from '../../src/protocol/screen/viewer-messages.ts';

describe('the binary packet message', () => {
  it('is flags, the presentation time (8 bytes, big-endian), then the access unit (the documented layout)', () => {
    const bytes = encodePacketMessage(true, 0x0102030405, Uint8Array.of(0, 0, 0, 1, 0x65), Uint8Array.of(9));
    expect([...bytes]).toEqual([1, 0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0, 1, 0x65, 9]);
    expect([...encodePacketMessage(false, 33_333, Uint8Array.of(7))]).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0x82, 0x35, 7,
    ]);
  });

  it('decodes what it encodes, for any flags, time and access unit', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.maxSafeNat(),
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        (key, pts, data) => {
          const m = decodePacketMessage(encodePacketMessage(key, pts, data));
          expect(m).toEqual({ key, pts, data });
        },
      ),
    );
  });

  it('reads the key frame from bit 0 of the flags alone (the other bits are reserved)', () => {
    const bytes = encodePacketMessage(false, 7, Uint8Array.of(0, 0, 0, 1, 0x41));
    bytes[0] = 0xfe;
    expect(decodePacketMessage(bytes).key).toBe(false);
    bytes[0] = 0xff;
    expect(decodePacketMessage(bytes).key).toBe(true);
  });

  it('reads a time past 2^53 − 1 µs as 2^53 − 1 (the largest a number, and a WebCodecs timestamp, holds)', () => {
    const bytes = encodePacketMessage(true, 0, Uint8Array.of(9));
    new DataView(bytes.buffer).setBigUint64(1, 2n ** 60n);
    expect(decodePacketMessage(bytes).pts).toBe(Number.MAX_SAFE_INTEGER);
    new DataView(bytes.buffer).setBigUint64(1, 2n ** 64n - 1n);
    expect(decodePacketMessage(bytes).pts).toBe(Number.MAX_SAFE_INTEGER);
    new DataView(bytes.buffer).setBigUint64(1, BigInt(Number.MAX_SAFE_INTEGER));
    expect(decodePacketMessage(bytes).pts).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('a message is one access unit: the header alone (or less) is refused both ways, naming the sizes', () => {
    expect(() => decodePacketMessage(Uint8Array.of(1, 2, 3))).toThrow(ScreenMessageError);
    expect(() => decodePacketMessage(new Uint8Array(9))).toThrow(/at least 10 bytes, this one 9/);
    expect(() => encodePacketMessage(true, 0)).toThrow(/empty access unit/);
    expect(() => encodePacketMessage(true, 0, new Uint8Array(0), new Uint8Array(0))).toThrow(RangeError);
  });

  it('any bytes decode (with the access unit after the 9-byte header) or throw ScreenMessageError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        try {
          const m = decodePacketMessage(bytes);
          expect(m.data.byteLength).toBe(bytes.byteLength - 9);
          expect(m.data.byteLength).toBeGreaterThan(0);
          expect(m.pts).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
        } catch (err) {
          expect(err).toBeInstanceOf(ScreenMessageError);
        }
      }),
    );
  });
});

describe('the text messages', () => {
  it('reads the documented examples', () => {
    expect(
      parseScreenTextMessage(
        '{"type":"start","codec":"avc1.64001f","width":720,"height":1280,"displayWidth":1080,"displayHeight":1920,"source":"agent"}',
      ),
    ).toEqual({
      type: 'start',
      codec: 'avc1.64001f',
      width: 720,
      height: 1280,
      displayWidth: 1080,
      displayHeight: 1920,
      source: 'agent',
    });
    expect(parseScreenTextMessage('{"type":"skipped","frames":12}')).toEqual({ type: 'skipped', frames: 12 });
    expect(parseScreenTextMessage('{"type":"end","reason":"lease-ended","message":"gone"}')).toEqual({
      type: 'end',
      reason: 'lease-ended',
      message: 'gone',
    });
    expect(
      parseScreenTextMessage('{"type":"error","code":"INVALID_ARGUMENT","message":"x out of range"}'),
    ).toEqual({ type: 'error', code: 'INVALID_ARGUMENT', message: 'x out of range' });
    // A message left out is empty; unknown fields are ignored.
    expect(parseScreenTextMessage('{"type":"end","reason":"going-away","later":1}')).toEqual({
      type: 'end',
      reason: 'going-away',
      message: '',
    });
  });

  const start = (fields: Record<string, unknown>) =>
    JSON.stringify({
      type: 'start',
      codec: 'avc1.64001f',
      width: 720,
      height: 1280,
      displayWidth: 1080,
      displayHeight: 1920,
      source: 'agent',
      ...fields,
    });

  it('refuses what is not the documented format, naming the field', () => {
    expect(() => parseScreenTextMessage('nope')).toThrow(/must be JSON/);
    expect(() => parseScreenTextMessage('[1]')).toThrow(/JSON object/);
    expect(() => parseScreenTextMessage('{"type":"hello"}')).toThrow(/unknown message type "hello"/);
    expect(() => parseScreenTextMessage('{"type":"end","reason":"bored"}')).toThrow(/reason must be one of/);
    expect(() => parseScreenTextMessage('{"type":"skipped","frames":-1}')).toThrow(/frames/);
    expect(() => parseScreenTextMessage('{"type":"skipped","frames":1e300}')).toThrow(/frames/);
    expect(() => parseScreenTextMessage(start({ width: 0 }))).toThrow(/width must be/);
    expect(() => parseScreenTextMessage(start({ displayHeight: 1.5 }))).toThrow(/displayHeight must be/);
    expect(() => parseScreenTextMessage(start({ source: 'camera' }))).toThrow(/source/);
    // `code` is part of an error message: one without it is not the format.
    expect(() => parseScreenTextMessage('{"type":"error","message":"?"}')).toThrow(/error: code/);
  });

  it('a codec is the WebCodecs H.264 string: `avc1.` (lower case, as browsers take it) and six hex digits', () => {
    expect(parseScreenTextMessage(start({ codec: 'avc1.64001F' }))).toMatchObject({ codec: 'avc1.64001F' });
    for (const codec of [
      'vp8',
      'AVC1.64001f',
      'Avc1.64001f',
      'avc1.64001',
      'avc1.64001fa',
      'avc1.g4001f',
      7,
    ]) {
      expect(() => parseScreenTextMessage(start({ codec })), String(codec)).toThrow(/codec must be avc1/);
    }
  });

  it('a picture or display side is any whole number above 0 (no cap: the device says how large it is)', () => {
    expect(parseScreenTextMessage(start({ width: 20_000, displayWidth: 2 ** 31 }))).toMatchObject({
      width: 20_000,
      displayWidth: 2 ** 31,
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (side) => {
        expect(parseScreenTextMessage(start({ height: side }))).toMatchObject({ height: side });
      }),
    );
  });

  it('any text parses or throws ScreenMessageError', () => {
    const texts = fc.oneof(
      fc.string(),
      fc.json(),
      fc
        .record({
          type: fc.constantFrom('start', 'skipped', 'end', 'error', 'other'),
          frames: fc.anything(),
          reason: fc.anything(),
          codec: fc.anything(),
          width: fc.anything(),
        })
        .map((o) => JSON.stringify(o)),
    );
    const parsesOrRefuses = (text: string) => {
      try {
        parseScreenTextMessage(text);
      } catch (err) {
        expect(err).toBeInstanceOf(ScreenMessageError);
      }
    };
    fc.assert(fc.property(texts, parsesOrRefuses));
    // Any JSON object with each type (the fields of another type, or none).
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('start', 'skipped', 'end', 'error', 'x'), (v, type) => {
        parsesOrRefuses(JSON.stringify(v));
        if (typeof v === 'object' && v !== null && !Array.isArray(v))
          parsesOrRefuses(JSON.stringify({ ...v, type }));
      }),
    );
  });
});

describe('the viewer input messages', () => {
  it('takes the documented pointer, key and text messages; refuses the rest naming the field', () => {
    expect(ScreenInputSchema.parse({ type: 'pointer', action: 'down', x: 1, y: 2.5 })).toEqual({
      type: 'pointer',
      action: 'down',
      x: 1,
      y: 2.5,
    });
    // A cancel: the browser took the pointer over (pointercancel); the finger ends without a click.
    expect(ScreenInputSchema.parse({ type: 'pointer', action: 'cancel', x: 1, y: 2 })).toMatchObject({
      action: 'cancel',
    });
    expect(ScreenInputSchema.parse({ type: 'key', key: 'ENTER' })).toEqual({ type: 'key', key: 'ENTER' });
    expect(ScreenInputSchema.parse({ type: 'text', text: 'Grüße' })).toEqual({ type: 'text', text: 'Grüße' });
    const bad = ScreenInputSchema.safeParse({ type: 'pointer', action: 'hover', x: 1, y: 1 });
    expect(bad.success).toBe(false);
    expect(ScreenInputSchema.safeParse({ type: 'key', key: 'no-such-key' }).success).toBe(false);
    expect(ScreenInputSchema.safeParse({ type: 'text', text: '\uD800' }).success).toBe(false);
    expect(ScreenInputSchema.safeParse({ type: 'pointer', action: 'up', x: -1, y: 0 }).success).toBe(false);
  });

  it('any JSON value is accepted with its shape or refused, never thrown', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const parsed = ScreenInputSchema.safeParse(value);
        if (parsed.success) expect(['pointer', 'key', 'text']).toContain(parsed.data.type);
      }),
    );
  });
});
