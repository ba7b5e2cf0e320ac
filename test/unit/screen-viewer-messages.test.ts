/**
 * The live screen's viewer messages (src/protocol/screen/viewer-messages.ts) and the viewer's input
 * contract (src/api/screen.ts): golden bytes from docs/live-screen.md, and properties over any input
 * (a parser of outside bytes never throws anything but its own error; encode then decode is the
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

  it('decodes what it encodes, for any flags, time and payload', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.maxSafeNat(), fc.uint8Array({ maxLength: 300 }), (key, pts, data) => {
        const m = decodePacketMessage(encodePacketMessage(key, pts, data));
        expect(m).toEqual({ key, pts, data });
      }),
    );
  });

  it('refuses a message shorter than its header, and any bytes decode or throw ScreenMessageError', () => {
    expect(() => decodePacketMessage(Uint8Array.of(1, 2, 3))).toThrow(ScreenMessageError);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        try {
          const m = decodePacketMessage(bytes);
          expect(m.data.byteLength).toBe(bytes.byteLength - 9);
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
    expect(() => parseScreenTextMessage('{"type":"end","reason":"bored"}')).toThrow(/reason must be one of/);
    expect(() => parseScreenTextMessage('{"type":"start","codec":"vp8"}')).toThrow(/codec/);
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
    fc.assert(
      fc.property(texts, (text) => {
        try {
          parseScreenTextMessage(text);
        } catch (err) {
          expect(err).toBeInstanceOf(ScreenMessageError);
        }
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
