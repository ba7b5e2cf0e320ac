/**
 * The glass agent's screen framing against golden bytes written from docs/live-screen.md
 * (test/fixtures/screen/*.hex), and property tests: any header round-trips, any chunking of a
 * stream decodes to the same frames, and garbage is refused with a named problem, never a crash.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodePacketHeader,
  decodeSessionHeader,
  decodeSizePayload,
  encodePacketHeader,
  encodeScreenPacket,
  encodeSessionHeader,
  encodeSizePayload,
  MAX_SCREEN_PAYLOAD,
  type ScreenFrame,
  ScreenFrameDecoder,
  ScreenProtocolError,
} from '../../src/protocol/screen/framing.ts';
import { cutAt, hexFixture } from '../support/screen.ts';

const size720 = { videoWidth: 720, videoHeight: 1280, displayWidth: 1080, displayHeight: 1920 };
const rotated = { videoWidth: 1280, videoHeight: 720, displayWidth: 1920, displayHeight: 1080 };

function decodeAll(chunks: Uint8Array[]): ScreenFrame[] {
  const decoder = new ScreenFrameDecoder();
  return chunks.flatMap((c) => decoder.push(c));
}

describe('screen framing: golden bytes', () => {
  it('the session header', () => {
    const golden = hexFixture('session-header.hex');
    expect(golden).toHaveLength(25);
    expect(encodeSessionHeader(size720)).toEqual(golden);
    expect(decodeSessionHeader(golden)).toEqual({ codec: 'h264', ...size720 });
  });

  it('packet headers: CONFIG, KEY_FRAME, a delta frame, the largest exact pts', () => {
    const cases = [
      ['packet-config.hex', { config: true, key: false, size: false, pts: 0, length: 16 }],
      ['packet-key.hex', { config: false, key: true, size: false, pts: 33_333, length: 0x1234 }],
      ['packet-delta.hex', { config: false, key: false, size: false, pts: 1_000_000, length: 1024 }],
      [
        'packet-key-max-pts.hex',
        { config: false, key: true, size: false, pts: Number.MAX_SAFE_INTEGER, length: 0 },
      ],
    ] as const;
    for (const [file, header] of cases) {
      const golden = hexFixture(file);
      expect(encodePacketHeader(header), file).toEqual(golden);
      expect(decodePacketHeader(golden), file).toEqual(header);
    }
  });

  it('a SIZE packet and its payload', () => {
    const golden = hexFixture('packet-size.hex');
    expect(encodeScreenPacket({ size: true }, 2_000_000, encodeSizePayload(rotated))).toEqual(golden);
    expect(decodePacketHeader(golden)).toMatchObject({ size: true, pts: 2_000_000, length: 16 });
    expect(decodeSizePayload(golden.subarray(12))).toEqual(rotated);
  });

  it('a whole stream decodes to the session, config, key, delta and size frames', () => {
    const frames = decodeAll([hexFixture('stream.hex')]);
    expect(frames.map((f) => f.type)).toEqual(['session', 'packet', 'packet', 'packet', 'size']);
    expect(frames[0]).toEqual({ type: 'session', header: { codec: 'h264', ...size720 } });
    expect(frames[1]).toMatchObject({ config: true, key: false, pts: 0 });
    expect(Buffer.from((frames[1] as { data: Uint8Array }).data).toString('hex')).toBe(
      '000000016742c01f0000000168ce3c80',
    );
    expect(frames[2]).toMatchObject({ config: false, key: true, pts: 0 });
    expect(frames[3]).toMatchObject({ config: false, key: false, pts: 33_333 });
    expect(Buffer.from((frames[3] as { data: Uint8Array }).data).toString('hex')).toBe('000001419a02');
    expect(frames[4]).toEqual({ type: 'size', pts: 2_000_000, size: rotated });
  });

  it("decodes what the glass agent's Java writer wrote (java-*.hex): the two sides agree", () => {
    const frames = decodeAll([hexFixture('java-session-header.hex'), hexFixture('java-packets.hex')]);
    expect(frames.map((f) => f.type)).toEqual([
      'session',
      'packet',
      'packet',
      'packet',
      'size',
      'packet',
      'packet',
      'packet',
    ]);
    expect(frames[0]).toEqual({ type: 'session', header: { codec: 'h264', ...size720 } });
    expect(frames[1]).toMatchObject({ config: true, key: false, pts: 0 });
    expect(Buffer.from((frames[1] as { data: Uint8Array }).data).toString('hex')).toBe(
      '000000016764001f0000000168ee3c80',
    );
    expect(frames[2]).toMatchObject({ config: false, key: true, pts: 33_333 });
    expect(frames[3]).toMatchObject({ config: false, key: false, pts: 66_666 });
    expect(frames[4]).toEqual({ type: 'size', pts: 0, size: rotated });
    expect(frames[5]).toMatchObject({ config: true, key: false, pts: 100_000 });
    expect(frames[6]).toMatchObject({ config: false, key: true, pts: 5_000_000_000 });
    // 2^61−1 µs is past a safe integer: read as the nearest number, flags untouched.
    expect(frames[7]).toMatchObject({ config: false, key: false, pts: 2 ** 61 });
    expect(Buffer.from((frames[7] as { data: Uint8Array }).data).toString('hex')).toBe('000001419b');
  });

  it.each([
    ['bad-magic.hex', 'bad-magic', /starts "DBSD", not "DBSC"/],
    ['bad-version.hex', 'bad-version', /version 2/],
    ['bad-codec.hex', 'bad-codec', /codec "h265"/],
  ])('refuses %s naming the problem', (file, problem, message) => {
    const decoder = new ScreenFrameDecoder();
    let caught: unknown;
    try {
      decoder.push(hexFixture(file));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ScreenProtocolError);
    expect((caught as ScreenProtocolError).problem).toBe(problem);
    expect((caught as ScreenProtocolError).code).toBe('HELPER_PROTOCOL_ERROR');
    expect((caught as Error).message).toMatch(message);
    // The state is unknown after a protocol error: more input is refused too.
    expect(() => decoder.push(new Uint8Array(1))).toThrow(ScreenProtocolError);
  });

  it('refuses a payload over 16 MiB as soon as its header is read', () => {
    const decoder = new ScreenFrameDecoder();
    decoder.push(hexFixture('session-header.hex'));
    const header = hexFixture('packet-oversize.hex');
    expect(() => decoder.push(header)).toThrow(/16777217 bytes of payload \(at most 16777216\)/);
    expect(() =>
      encodePacketHeader({ config: false, key: false, size: false, pts: 0, length: MAX_SCREEN_PAYLOAD + 1 }),
    ).toThrow(RangeError);
    // Exactly the limit is allowed.
    expect(
      decodePacketHeader(
        encodePacketHeader({ config: false, key: false, size: false, pts: 0, length: MAX_SCREEN_PAYLOAD }),
      ).length,
    ).toBe(MAX_SCREEN_PAYLOAD);
  });

  it('refuses a SIZE packet of another length or with other flags', () => {
    const wrongLength = encodePacketHeader({ config: false, key: false, size: true, pts: 1, length: 15 });
    expect(() => decodePacketHeader(wrongLength)).toThrow(/SIZE packet carries 15 bytes/);
    const flagged = encodePacketHeader({ config: false, key: true, size: true, pts: 1, length: 16 });
    expect(() => decodePacketHeader(flagged)).toThrow(/also flagged/);
  });
});

describe('screen framing: properties', () => {
  const side = fc.integer({ min: 1, max: 0xffffffff });
  const sizeArb = fc.record({
    videoWidth: side,
    videoHeight: side,
    displayWidth: side,
    displayHeight: side,
  });
  const packetArb = fc.oneof(
    fc.record({
      type: fc.constant('packet' as const),
      config: fc.boolean(),
      key: fc.boolean(),
      pts: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      data: fc.uint8Array({ maxLength: 64 }),
    }),
    fc.record({
      type: fc.constant('size' as const),
      pts: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      size: sizeArb,
    }),
  );

  it('headers round-trip', () => {
    fc.assert(
      fc.property(sizeArb, packetArb, (size, packet) => {
        expect(decodeSessionHeader(encodeSessionHeader(size))).toEqual({ codec: 'h264', ...size });
        if (packet.type === 'packet') {
          const header = {
            config: packet.config,
            key: packet.key,
            size: false,
            pts: packet.pts,
            length: packet.data.length,
          };
          expect(decodePacketHeader(encodePacketHeader(header))).toEqual(header);
        } else {
          expect(decodeSizePayload(encodeSizePayload(packet.size))).toEqual(packet.size);
        }
      }),
    );
  });

  it('any chunking of a stream gives the same frames', () => {
    fc.assert(
      fc.property(
        sizeArb,
        fc.array(packetArb, { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (size, packets, cuts) => {
          const parts = [encodeSessionHeader(size)];
          for (const p of packets) {
            parts.push(
              p.type === 'packet'
                ? encodeScreenPacket({ config: p.config, key: p.key }, p.pts, p.data)
                : encodeScreenPacket({ size: true }, p.pts, encodeSizePayload(p.size)),
            );
          }
          const stream = Buffer.concat(parts);
          const expected: ScreenFrame[] = [
            { type: 'session', header: { codec: 'h264', ...size } },
            ...packets.map(
              (p): ScreenFrame =>
                p.type === 'packet'
                  ? { type: 'packet', config: p.config, key: p.key, pts: p.pts, data: p.data }
                  : { type: 'size', pts: p.pts, size: p.size },
            ),
          ];
          const frames = decodeAll(cutAt(stream, cuts)).map((f) =>
            f.type === 'packet' ? { ...f, data: Uint8Array.from(f.data) } : f,
          );
          expect(frames).toEqual(expected);
        },
      ),
    );
  });

  it('garbage is refused with a named problem or waited on, never anything else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const decoder = new ScreenFrameDecoder();
        try {
          for (const chunk of cutAt(bytes, cuts)) decoder.push(chunk);
        } catch (err) {
          expect(err).toBeInstanceOf(ScreenProtocolError);
        }
      }),
    );
  });
});
