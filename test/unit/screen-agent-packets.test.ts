/**
 * What the glass agent's screen stream hands on of a device packet: an empty payload carries no
 * access unit (viewers refuse one), and a time past 2^53 - 1 µs (the framing has 61 bits) reads as
 * 2^53 - 1 instead of failing the stream when the viewer message is written.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sourcePacket } from '../../src/helpers/screen/agent-source.ts';
import { decodePacketHeader, encodePacketHeader, MAX_SCREEN_PTS } from '../../src/protocol/screen/framing.ts';
import { decodePacketMessage, encodePacketMessage } from '../../src/protocol/screen/viewer-messages.ts';

describe("the agent stream's packets", () => {
  it('an empty payload is dropped', () => {
    expect(
      sourcePacket({ type: 'packet', config: false, key: false, pts: 5, data: new Uint8Array(0) }),
    ).toBeNull();
  });

  it('any device time becomes a viewer message a viewer reads back (past 2^53 - 1: 2^53 - 1)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_SCREEN_PTS }), fc.boolean(), (pts, key) => {
        const bytes = new Uint8Array(12);
        new DataView(bytes.buffer).setBigUint64(0, pts);
        const header = decodePacketHeader(bytes);
        const packet = sourcePacket({
          type: 'packet',
          config: false,
          key,
          pts: header.pts,
          data: Uint8Array.of(0, 0, 1, 0x65),
        });
        expect(packet).not.toBeNull();
        const message = decodePacketMessage(encodePacketMessage(packet!.key, packet!.pts, packet!.data));
        const expected = pts > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(pts);
        expect(message.pts).toBe(expected);
        expect(message.key).toBe(key);
      }),
    );
    // The largest time the framing holds, written by the agent's own encoder.
    const largest = decodePacketHeader(
      encodePacketHeader({ config: false, key: true, size: false, pts: Number.MAX_SAFE_INTEGER, length: 4 }),
    );
    expect(sourcePacket({ type: 'packet', ...largest, data: Uint8Array.of(1) })?.pts).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });
});
