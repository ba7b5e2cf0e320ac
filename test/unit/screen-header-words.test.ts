/**
 * The packet headers' 64-bit words read and written without BigInt (the relay's per-frame path):
 * checked against the BigInt/DataView reading of the same bytes for every bit pattern.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodePacketHeader, MAX_SCREEN_PTS } from '../../src/protocol/screen/framing.ts';
import {
  decodePacketMessage,
  encodePacketMessage,
  writePacketMessageHeader,
} from '../../src/protocol/screen/viewer-messages.ts';

describe('screen header words', () => {
  it('decodePacketHeader reads flags and pts as the 64-bit word does', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (word) => {
        const bytes = new Uint8Array(12);
        const view = new DataView(bytes.buffer);
        view.setBigUint64(0, word);
        view.setUint32(8, 16);
        let header: ReturnType<typeof decodePacketHeader>;
        try {
          header = decodePacketHeader(bytes);
        } catch {
          // A SIZE packet also flagged CONFIG or KEY_FRAME.
          expect((word >> 61n) & 1n).toBe(1n);
          expect(word >> 62n).not.toBe(0n);
          return;
        }
        expect(header.config).toBe(word >> 63n === 1n);
        expect(header.key).toBe(((word >> 62n) & 1n) === 1n);
        expect(header.size).toBe(((word >> 61n) & 1n) === 1n);
        expect(header.pts).toBe(Number(word & MAX_SCREEN_PTS));
      }),
    );
  });

  it('the viewer message header holds the pts as a big-endian 64-bit integer', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.maxSafeNat(), (key, pts) => {
        const out = new Uint8Array(9);
        writePacketMessageHeader(out, key, pts);
        const view = new DataView(out.buffer);
        expect(view.getBigUint64(1)).toBe(BigInt(pts));
        expect(out[0]).toBe(key ? 1 : 0);
        const message = decodePacketMessage(
          encodePacketMessage(key, pts, Uint8Array.of(1, 2), Uint8Array.of(3)),
        );
        expect(message).toEqual({ key, pts, data: Uint8Array.of(1, 2, 3) });
      }),
    );
  });

  it('refuses a pts that is not a whole number ≥ 0', () => {
    expect(() => writePacketMessageHeader(new Uint8Array(9), false, -1)).toThrow(RangeError);
    expect(() => writePacketMessageHeader(new Uint8Array(9), false, 2 ** 53)).toThrow(RangeError);
  });
});
