/**
 * The screenshot scaler: PNGs of every 8-bit colour type and filter decode to the pixels they were
 * made of (encoded here with each filter, compressed by zlib); a scaled image averages the areas it
 * covers; damaged or unsupported files are null, never an exception (property).
 */
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodePng, encodePng, fitPng, type Pixels, scaleDown } from '../../src/mcp/png-scale.ts';
import { PNG_MAGIC, pngChunk } from '../../src/protocol/helper/png-header.ts';

/** A PNG of `rows` (bpp bytes per pixel) with `filter` applied on every row, as the spec defines it. */
function filteredPng(
  width: number,
  height: number,
  colour: number,
  bpp: number,
  rows: Uint8Array,
  filter: number,
) {
  const stride = width * bpp;
  const raw = Buffer.alloc((stride + 1) * height);
  const at = (x: number, y: number) => (x < 0 || y < 0 ? 0 : (rows[y * stride + x] as number));
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = filter;
    for (let x = 0; x < stride; x++) {
      const a = at(x - bpp, y);
      const b = at(x, y - 1);
      const c = at(x - bpp, y - 1);
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const predicted = [0, a, b, (a + b) >> 1, paeth][filter] as number;
      raw[y * (stride + 1) + 1 + x] = (at(x, y) - predicted) & 0xff;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = colour;
  return Buffer.concat([
    Buffer.from(PNG_MAGIC),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

describe('screenshot scaling', () => {
  it('decodes every filter of RGB, RGBA, grey and grey+alpha to the pixels encoded (property)', () => {
    const types = [
      { colour: 2, bpp: 3 },
      { colour: 6, bpp: 4 },
      { colour: 0, bpp: 1 },
      { colour: 4, bpp: 2 },
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(...types),
        fc.integer({ min: 0, max: 4 }),
        fc.infiniteStream(fc.integer({ min: 0, max: 255 })),
        (width, height, { colour, bpp }, filter, bytes) => {
          const rows = Uint8Array.from(bytes.take(width * height * bpp));
          const image = decodePng(filteredPng(width, height, colour, bpp, rows, filter));
          expect(image).not.toBeNull();
          const expected =
            bpp >= 3
              ? rows
              : Uint8Array.from(
                  [...rows].flatMap((g, i) => (bpp === 2 ? (i % 2 === 0 ? [g, g, g] : [g]) : [g, g, g])),
                );
          expect(image?.data).toEqual(expected);
          expect(image?.channels).toBe(bpp === 2 || bpp === 4 ? 4 : 3);
        },
      ),
    );
  });

  it('never throws on damaged bytes: null or an image', () => {
    const good = encodePng({ width: 4, height: 3, channels: 3, data: new Uint8Array(36).fill(7) });
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.nat(good.length - 1),
        fc.integer({ min: 0, max: 255 }),
        (noise, at, byte) => {
          expect(() => decodePng(noise)).not.toThrow();
          const damaged = Buffer.from(good);
          damaged[at] = byte;
          expect(() => decodePng(damaged)).not.toThrow();
        },
      ),
    );
  });

  it('averages the area each output pixel covers, and fits within the asked size keeping the aspect', () => {
    const image: Pixels = { width: 4, height: 2, channels: 3, data: new Uint8Array(24) };
    for (let i = 0; i < 8; i++) image.data.set(i % 2 === 0 ? [0, 0, 0] : [200, 100, 50], i * 3);
    expect(scaleDown(image, 2, 1).data).toEqual(Uint8Array.from([100, 50, 25, 100, 50, 25]));
    const big = encodePng({ width: 1080, height: 2400, channels: 3, data: new Uint8Array(1080 * 2400 * 3) });
    const fitted = fitPng(big, 540, 540);
    expect(fitted).toMatchObject({ width: 243, height: 540 });
    expect(decodePng(fitted!.png)).toMatchObject({ width: 243, height: 540 });
    expect(fitPng(big, 2000, 3000)).toBeNull();
  });
});
