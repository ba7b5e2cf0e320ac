/**
 * The Annex B splitter and SPS reader against real libx264 streams (test/fixtures/screen/*.h264,
 * whose pictures and sizes ffprobe reports), and property tests: any chunking gives the same access
 * units, the units concatenated are the stream, and garbage never throws.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AccessUnit,
  AnnexBSplitter,
  findNal,
  NAL_SPS,
  nalUnits,
  splitParameterSets,
} from '../../src/protocol/screen/annexb.ts';
import { codecString, parseSps, SpsError } from '../../src/protocol/screen/sps.ts';
import { binaryFixture, cutAt } from '../support/screen.ts';

function split(chunks: Uint8Array[]): AccessUnit[] {
  const splitter = new AnnexBSplitter();
  const units = chunks.flatMap((c) => splitter.push(c));
  const last = splitter.flush();
  return last === null ? units : [...units, last];
}

const flags = (units: AccessUnit[]) =>
  units.map((u) => `${u.config ? 'C' : ''}${u.key ? 'K' : ''}${u.picture ? 'P' : ''}`);

describe('Annex B splitter', () => {
  it('cuts a baseline stream into its 6 pictures, IDR with SPS/PPS at 0 and 3', () => {
    const stream = binaryFixture('baseline-64x48.h264');
    const units = split([stream]);
    expect(flags(units)).toEqual(['CKP', 'P', 'P', 'CKP', 'P', 'P']);
    expect(Buffer.concat(units.map((u) => u.data))).toEqual(Buffer.from(stream));
    // The first unit holds SPS, PPS, SEI and the IDR slice, in that order.
    expect(nalUnits(units[0]!.data).map((n) => n.type)).toEqual([7, 8, 6, 5]);
    expect(nalUnits(units[3]!.data).map((n) => n.type)).toEqual([7, 8, 5]);
  });

  it('cuts a High profile stream into its 4 pictures, IDR at 0 and 2', () => {
    const units = split([binaryFixture('high-72x40.h264')]);
    expect(flags(units)).toEqual(['CKP', 'P', 'CKP', 'P']);
  });

  it('a unit is emitted once the next one starts; flush ends the last', () => {
    const stream = binaryFixture('baseline-64x48.h264');
    const splitter = new AnnexBSplitter();
    const units = split([stream]);
    const firstTwo = units[0]!.data.length + units[1]!.data.length;
    // Up to the end of the second picture: only the first is known complete.
    expect(splitter.push(stream.subarray(0, firstTwo))).toHaveLength(1);
    expect(splitter.buffered).toBe(units[1]!.data.length);
    expect(splitter.flush()?.data).toEqual(units[1]!.data);
    expect(splitter.flush()).toBeNull();
  });

  it('skips bytes before the first start code, and a unit torn by a flush up to the next start code', () => {
    const stream = binaryFixture('baseline-64x48.h264');
    const units = split([stream]);
    const splitter = new AnnexBSplitter();
    expect(splitter.push(Uint8Array.of(7, 7, 7, 0x42, 0, 0))).toEqual([]);
    const got = [...splitter.push(stream)];
    expect(splitter.skipped).toBe(6);
    got.push(splitter.flush()!);
    expect(got.map((u) => u.data)).toEqual(units.map((u) => u.data));
    // Flushed in the middle of a picture: the rest of it is skipped, the next unit comes whole.
    const torn = new AnnexBSplitter();
    const half = units[0]!.data.length + 100;
    expect(torn.push(stream.subarray(0, half)).map((u) => u.data)).toEqual([units[0]!.data]);
    expect(torn.flush()?.data).toEqual(units[1]!.data.subarray(0, 100));
    const after = torn.push(stream.subarray(half));
    const last = torn.flush();
    expect([...after, last].map((u) => u?.data)).toEqual(units.slice(2).map((u) => u.data));
    expect(torn.skipped).toBe(units[1]!.data.length - 100);
  });

  it('splits parameter sets from the picture', () => {
    const [first] = split([binaryFixture('baseline-64x48.h264')]);
    const { config, picture } = splitParameterSets(first!.data);
    expect(nalUnits(config!).map((n) => n.type)).toEqual([7, 8]);
    expect(nalUnits(picture!).map((n) => n.type)).toEqual([6, 5]);
    expect(config!.length + picture!.length).toBe(first!.data.length);
    expect(splitParameterSets(Uint8Array.of(0, 0, 1, 0x41, 0x9a))).toEqual({
      config: null,
      picture: Uint8Array.of(0, 0, 1, 0x41, 0x9a),
    });
  });

  it('any chunking gives the same access units (real streams)', () => {
    for (const name of ['baseline-64x48.h264', 'high-72x40.h264']) {
      const stream = binaryFixture(name);
      const digest = (units: AccessUnit[]) =>
        units.map((u) => `${flags([u])[0]}:${Buffer.from(u.data).toString('hex')}`);
      const whole = digest(split([stream]));
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
          expect(digest(split(cutAt(stream, cuts)))).toEqual(whole);
        }),
        { numRuns: 100 },
      );
    }
  });

  /** A synthetic NAL unit: a start code (3 or 4 bytes), a header of `type`, a body without 00 00. */
  const nalArb = fc
    .record({
      long: fc.boolean(),
      type: fc.constantFrom(1, 5, 6, 7, 8, 9),
      firstMb: fc.boolean(),
      body: fc.array(fc.integer({ min: 1, max: 255 }), { maxLength: 12 }),
    })
    .map(({ long, type, firstMb, body }) => {
      const second =
        (type === 1 || type === 5) && firstMb ? 0x80 | ((body[0] ?? 0) & 0x7f) : (body[0] ?? 1) & 0x7f || 1;
      return Uint8Array.from([...(long ? [0] : []), 0, 0, 1, 0x60 | type, second, ...body.slice(1)]);
    });

  it('any chunking of any NAL sequence gives the same units, which concatenate to the stream', () => {
    fc.assert(
      fc.property(
        fc.array(nalArb, { maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (nals, cuts) => {
          const stream = Buffer.concat(nals);
          const whole = split([stream]);
          expect(split(cutAt(stream, cuts))).toEqual(whole);
          expect(Buffer.concat(whole.map((u) => u.data))).toEqual(stream);
          // Every unit but the first starts a picture or a parameter set; at most one picture start each.
          for (const unit of whole) {
            const starts = nalUnits(unit.data).filter(
              (n) => (n.type === 1 || n.type === 5) && ((unit.data[n.start + 1] as number) & 0x80) !== 0,
            );
            expect(starts.length).toBeLessThanOrEqual(1);
          }
        },
      ),
    );
  });

  it('garbage never throws', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(), { maxLength: 10 }), (bytes, cuts) => {
        const units = split(cutAt(bytes, cuts));
        expect(units.every((u) => u.data.length > 0)).toBe(true);
      }),
    );
  });
});

describe('SPS', () => {
  it('codec strings and sizes of real streams (as ffprobe reads them)', () => {
    const baseline = findNal(binaryFixture('baseline-64x48.h264'), NAL_SPS)!;
    expect(codecString(baseline)).toBe('avc1.42c00a');
    expect(parseSps(baseline)).toMatchObject({ profileIdc: 66, levelIdc: 10, width: 64, height: 48 });
    const high = findNal(binaryFixture('high-72x40.h264'), NAL_SPS)!;
    expect(codecString(high)).toBe('avc1.64000a');
    expect(parseSps(high)).toMatchObject({ profileIdc: 100, width: 72, height: 40 });
  });

  it('refuses what is not an SPS, naming it', () => {
    expect(() => codecString(Uint8Array.of(0x68, 1, 2, 3))).toThrow(/NAL type 8 is not an SPS/);
    expect(() => codecString(Uint8Array.of(0x67, 1))).toThrow(SpsError);
    expect(() => parseSps(Uint8Array.of(0x67, 0x64, 0, 10))).toThrow(/truncated/);
  });

  it('garbage after an SPS header is read or refused as an SPS error, nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 3, maxLength: 40 }), (body) => {
        const sps = Uint8Array.from([0x67, ...body]);
        try {
          const info = parseSps(sps);
          expect(info.width).toBeGreaterThan(0);
          expect(info.height).toBeGreaterThan(0);
        } catch (err) {
          expect(err).toBeInstanceOf(SpsError);
        }
      }),
    );
  });
});
