/**
 * Screenshots as PNG: the bridge's header reader (pure, outside input: property tests) and the
 * simulator's encoder and screen (a real PNG: signature, IHDR, CRC-32s, zlib-decodable rows).
 */
import { inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { crc32, PNG_MAGIC, readPngHeader } from '../../src/protocol/helper/png-header.ts';
import { runCaptured } from '../../src/simulator/android/capture.ts';
import { createSimAndroid } from '../../src/simulator/android/index.ts';
import { encodePng } from '../../src/simulator/android/screen/png-encoder.ts';
import {
  drawTouches,
  fitBox,
  renderScreen,
  renderUi,
  touchPoints,
} from '../../src/simulator/android/screen/render.ts';

/** Every chunk of a PNG file: type, data, and whether its CRC-32 is right. */
function chunks(png: Uint8Array): Array<{ type: string; data: Buffer; crcOk: boolean }> {
  const buf = Buffer.from(png);
  const out: Array<{ type: string; data: Buffer; crcOk: boolean }> = [];
  let at = 8;
  while (at < buf.length) {
    const len = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    out.push({
      type,
      data,
      crcOk: crc32(buf.subarray(at + 4, at + 8 + len)) === buf.readUInt32BE(at + 8 + len),
    });
    at += 12 + len;
  }
  return out;
}

describe('crc32', () => {
  it('matches the standard check values', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    expect(crc32(new TextEncoder().encode('IEND'))).toBe(0xae426082);
  });
});

describe('encodePng', () => {
  it('writes signature, IHDR, IDAT, IEND with valid CRCs; rows inflate to the pixels', () => {
    const rgb = Uint8Array.from({ length: 3 * 4 * 3 }, (_, i) => (i * 37) & 0xff);
    const png = encodePng(4, 3, rgb);
    expect([...png.subarray(0, 8)]).toEqual([...PNG_MAGIC]);
    const cs = chunks(png);
    expect(cs.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(cs.every((c) => c.crcOk)).toBe(true);
    expect(readPngHeader(png)).toEqual({ width: 4, height: 3, bitDepth: 8, colorType: 2 });
    const raw = inflateSync(cs[1]!.data);
    expect(raw.length).toBe(3 * (1 + 4 * 3));
    for (let y = 0; y < 3; y++) {
      expect(raw[y * 13]).toBe(0);
      expect([...raw.subarray(y * 13 + 1, (y + 1) * 13)]).toEqual([...rgb.subarray(y * 12, (y + 1) * 12)]);
    }
  });

  it('refuses a pixel buffer of the wrong size', () => {
    expect(() => encodePng(2, 2, new Uint8Array(11))).toThrow(/expected 12 RGB bytes, got 11/);
    expect(() => encodePng(0, 2, new Uint8Array(0))).toThrow(/positive integers/);
  });
});

describe('readPngHeader', () => {
  it('names what came back instead of a PNG', () => {
    const text = new TextEncoder().encode('/system/bin/sh: screencap: inaccessible or not found\n');
    expect(() => readPngHeader(text)).toThrow(/no PNG signature.*screencap: inaccessible/);
    expect(() => readPngHeader(new Uint8Array(0))).toThrow(/got nothing/);
    const png = encodePng(2, 2, new Uint8Array(12));
    expect(() => readPngHeader(png.subarray(0, 20))).toThrow(/truncated/);
    const corrupt = Buffer.from(png);
    corrupt[17] = (corrupt[17] as number) ^ 1;
    expect(() => readPngHeader(corrupt)).toThrow(/CRC-32 mismatch/);
  });

  it('never throws anything but HELPER_FAILED on arbitrary bytes (and signature-prefixed bytes)', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.uint8Array({ maxLength: 64 }), (prefixed, tail) => {
        const bytes = prefixed ? Buffer.concat([PNG_MAGIC, tail]) : tail;
        try {
          const h = readPngHeader(bytes);
          expect(h.width).toBeGreaterThan(0);
        } catch (err) {
          expect(err).toBeInstanceOf(BridgeError);
          expect((err as BridgeError).code).toBe('HELPER_FAILED');
          expect((err as BridgeError).message).not.toMatch(/[\x00-\x1f]/);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reads back the size of every encoded image', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), (w, h) => {
        expect(readPngHeader(encodePng(w, h, new Uint8Array(w * h * 3)))).toMatchObject({
          width: w,
          height: h,
        });
      }),
      { numRuns: 50 },
    );
  });
});

describe('the simulated screen', () => {
  it('`screencap -p` prints a PNG of the wm size; a tap changes it', async () => {
    const android = createSimAndroid({ serial: 'screen-test', seed: 3 });
    const size = (await runCaptured(android, 'wm size')).stdout;
    const first = await runCaptured(android, ['screencap', '-p']);
    expect(first.status).toBe(0);
    const header = readPngHeader(first.stdoutBytes);
    expect(`Physical size: ${header.width}x${header.height}\n`).toBe(size);
    const idat = chunks(first.stdoutBytes).find((c) => c.type === 'IDAT')!;
    expect(inflateSync(idat.data).length).toBe(header.height * (1 + header.width * 3));
    expect((await runCaptured(android, 'input tap 540 1200')).status).toBe(0);
    const second = await runCaptured(android, ['screencap', '-p']);
    expect(Buffer.compare(Buffer.from(first.stdoutBytes), Buffer.from(second.stdoutBytes))).not.toBe(0);
  });

  it('draws node boxes and text where the XML puts them', () => {
    const xml =
      '<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="p" bounds="[0,0][100,60]">' +
      '<node class="android.widget.Button" clickable="true" text="OK" package="p" bounds="[10,10][90,50]"/></node></hierarchy>';
    const canvas = renderScreen({ width: 100, height: 60 }, xml);
    const at = (x: number, y: number) => [
      ...canvas.pixels.subarray((y * 100 + x) * 3, (y * 100 + x) * 3 + 3),
    ];
    expect(at(10, 30)).toEqual([40, 98, 200]); // the clickable box's border
    expect(at(50, 5)).not.toEqual(at(50, 30)); // the window background vs the button fill
    const ink = [...canvas.pixels].filter((v, i) => i % 3 === 0 && v === 20).length;
    expect(ink).toBeGreaterThan(20); // "OK" in the bitmap font
  });

  it('finds touch points in taps, swipes and touch plans', () => {
    expect(
      touchPoints([
        { type: 'tap', x: 1, y: 2 },
        { type: 'swipe', x1: 3, y1: 4, x2: 5, y2: 6 },
        { kind: 'swipe', pointers: [{ pointerId: 0, samples: [{ offsetMs: 0, x: 7, y: 8 }] }] },
        { type: 'glass-key' },
      ]),
    ).toEqual([
      { x: 1, y: 2 },
      { x: 3, y: 4 },
      { x: 7, y: 8 },
    ]);
  });

  it('finds the touch of a glass agent pointer gesture (the live screen’s input) where it went down', () => {
    const gesture = [
      { x: 9, y: 10, t_ms: 0 },
      { x: 30, y: 40, t_ms: 50 },
    ];
    expect(touchPoints([{ type: 'glass-pointer', samples: 2, button: null, gesture }])).toEqual([
      { x: 9, y: 10 },
    ]);
    // A gesture without points touches nothing.
    expect(touchPoints([{ type: 'glass-pointer', samples: 0, gesture: [] }])).toEqual([]);
    // The ring shows in the rendered picture (as `input tap` shows one).
    const size = { width: 100, height: 60 };
    const plain = renderScreen(size, '<hierarchy rotation="0"/>');
    const touched = renderScreen(
      size,
      '<hierarchy rotation="0"/>',
      touchPoints([
        { type: 'glass-pointer', samples: 1, button: null, gesture: [{ x: 50, y: 30, t_ms: 0 }] },
      ]),
    );
    expect(Buffer.from(touched.pixels).equals(Buffer.from(plain.pixels))).toBe(false);
  });

  it('draws at another picture size the full-size screen scaled, black around a letterbox', () => {
    const android = createSimAndroid({ serial: 'screen-size', seed: 3 });
    const display = android.device.displaySize();
    const xml = android.device.uiXml();
    const touches = [{ x: 540, y: 1200 }];
    const full = renderScreen(display, xml, touches);
    const picture = { width: 720, height: 1600 };
    const small = renderUi(display, xml, picture);
    drawTouches(small, touches);
    // Pixel for pixel the full-size screen scaled to the picture (the display pixel under each centre).
    let same = 0;
    for (let y = 0; y < picture.height; y++) {
      const sy = Math.floor(((y + 0.5) * display.height) / picture.height);
      for (let x = 0; x < picture.width; x++) {
        const sx = Math.floor(((x + 0.5) * display.width) / picture.width);
        const a = (y * picture.width + x) * 3;
        const b = (sy * display.width + sx) * 3;
        if (
          small.pixels[a] === full.pixels[b] &&
          small.pixels[a + 1] === full.pixels[b + 1] &&
          small.pixels[a + 2] === full.pixels[b + 2]
        )
          same++;
      }
    }
    expect(same).toBe(picture.width * picture.height);

    // A square picture of the tall display: the screen centred, black bars left and right.
    const square = { width: 240, height: 240 };
    const box = fitBox(display, square, 'letterbox');
    expect(box).toEqual({ x: 66, y: 0, width: 108, height: 240 });
    const boxed = renderUi(display, xml, square, box);
    const rgb = (x: number, y: number) => [
      ...boxed.pixels.subarray((y * 240 + x) * 3, (y * 240 + x) * 3 + 3),
    ];
    expect(rgb(0, 120)).toEqual([0, 0, 0]);
    expect(rgb(65, 120)).toEqual([0, 0, 0]);
    expect(rgb(174, 120)).toEqual([0, 0, 0]);
    expect(rgb(120, 120)).not.toEqual([0, 0, 0]);
    // A touch near the display's edge stays inside the box.
    const copy = boxed.copy();
    drawTouches(copy, [{ x: 0, y: 1200 }]);
    expect(rgb(65, 120)).toEqual([0, 0, 0]);
    expect([...copy.pixels.subarray((120 * 240 + 65) * 3, (120 * 240 + 66) * 3)]).toEqual([0, 0, 0]);
    expect([...copy.pixels.subarray((120 * 240 + 66) * 3, (120 * 240 + 67) * 3)]).toEqual([220, 40, 60]);
    // Drawing on the copy left the original as it was.
    expect(Buffer.from(copy.pixels).equals(Buffer.from(boxed.pixels))).toBe(false);
    expect(Buffer.from(renderUi(display, xml, square, box).pixels).equals(Buffer.from(boxed.pixels))).toBe(
      true,
    );
  });
});
