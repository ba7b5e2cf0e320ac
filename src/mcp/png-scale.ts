/**
 * A screenshot made smaller for an agent: the PNG decoded (8-bit greyscale, grey+alpha, RGB or RGBA,
 * not interlaced: what `screencap -p` writes), each output pixel the average of the source pixels
 * it covers, written back as an 8-bit RGB(A) PNG. Anything else (palette, 16-bit, interlaced, a
 * damaged file) is `null`: the caller sends the original. Pure but for zlib.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { PNG_MAGIC, pngChunk } from '../protocol/helper/png-header.ts';

export interface Pixels {
  width: number;
  height: number;
  /** 3 (RGB) or 4 (RGBA) bytes per pixel. */
  channels: 3 | 4;
  data: Uint8Array;
}

/** Bytes per pixel of the 8-bit colour types read here (0 grey, 2 RGB, 4 grey+alpha, 6 RGBA). */
const BYTES_PER_PIXEL: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/** Largest decoded image this decodes (a phone screen is ~10 MB of RGBA). */
const MAX_PIXELS = 40_000_000;

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Decode `png` to RGB(A) pixels, or null when it is not a PNG this reads. */
export function decodePng(png: Uint8Array): Pixels | null {
  if (png.length < 8 || !PNG_MAGIC.every((b, i) => png[i] === b)) return null;
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let at = 8;
  let width = 0;
  let height = 0;
  let colour = -1;
  const idat: Uint8Array[] = [];
  while (at + 12 <= png.length) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    if (at + 12 + length > png.length) return null;
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      if (length !== 13) return null;
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const [depth, col, , , interlace] = data.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || BYTES_PER_PIXEL[col as number] === undefined) return null;
      colour = col as number;
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    at += 12 + length;
  }
  if (colour < 0 || width < 1 || height < 1 || width * height > MAX_PIXELS || idat.length === 0) return null;
  const bpp = BYTES_PER_PIXEL[colour] as number;
  const stride = width * bpp;
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(idat), { maxOutputLength: (stride + 1) * height });
  } catch {
    return null;
  }
  if (raw.length !== (stride + 1) * height) return null;
  const rows = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)] as number;
    const src = y * (stride + 1) + 1;
    const out = y * stride;
    for (let x = 0; x < stride; x++) {
      const value = raw[src + x] as number;
      const a = x >= bpp ? (rows[out + x - bpp] as number) : 0;
      const b = y > 0 ? (rows[out - stride + x] as number) : 0;
      const c = x >= bpp && y > 0 ? (rows[out - stride + x - bpp] as number) : 0;
      let predicted: number;
      if (filter === 0) predicted = 0;
      else if (filter === 1) predicted = a;
      else if (filter === 2) predicted = b;
      else if (filter === 3) predicted = (a + b) >> 1;
      else if (filter === 4) predicted = paeth(a, b, c);
      else return null;
      rows[out + x] = (value + predicted) & 0xff;
    }
  }
  const channels: 3 | 4 = colour === 4 || colour === 6 ? 4 : 3;
  if (colour === 2 || colour === 6) return { width, height, channels, data: rows };
  // Greyscale (with alpha): widened to RGB(A).
  const data = new Uint8Array(width * height * channels);
  for (let i = 0, o = 0; i < rows.length; i += bpp, o += channels) {
    const g = rows[i] as number;
    data[o] = g;
    data[o + 1] = g;
    data[o + 2] = g;
    if (channels === 4) data[o + 3] = rows[i + 1] as number;
  }
  return { width, height, channels, data };
}

/** Encode pixels as an 8-bit RGB or RGBA PNG (filter 0 on every row). */
export function encodePng(image: Pixels): Buffer {
  const stride = image.width * image.channels;
  const raw = Buffer.alloc((stride + 1) * image.height);
  for (let y = 0; y < image.height; y++)
    raw.set(image.data.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(image.width, 0);
  ihdr.writeUInt32BE(image.height, 4);
  ihdr[8] = 8;
  ihdr[9] = image.channels === 4 ? 6 : 2;
  return Buffer.concat([
    Buffer.from(PNG_MAGIC),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

/** `image` scaled down to `width` × `height` (each output pixel the average of the area it covers). */
export function scaleDown(image: Pixels, width: number, height: number): Pixels {
  const { channels } = image;
  const data = new Uint8Array(width * height * channels);
  const sum = new Float64Array(channels);
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor((y * image.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * image.height) / height));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor((x * image.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * image.width) / width));
      sum.fill(0);
      for (let sy = y0; sy < y1; sy++) {
        for (let sx = x0; sx < x1; sx++) {
          const i = (sy * image.width + sx) * channels;
          for (let c = 0; c < channels; c++) sum[c] = (sum[c] as number) + (image.data[i + c] as number);
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = (y * width + x) * channels;
      for (let c = 0; c < channels; c++) data[o + c] = Math.round((sum[c] as number) / n);
    }
  }
  return { width, height, channels, data };
}

/**
 * `png` made to fit within `maxWidth` × `maxHeight` (aspect kept, never enlarged), or null when it
 * already fits or cannot be read (send the original then).
 */
export function fitPng(
  png: Uint8Array,
  maxWidth: number,
  maxHeight: number,
): { png: Buffer; width: number; height: number } | null {
  const image = decodePng(png);
  if (image === null) return null;
  const scale = Math.min(maxWidth / image.width, maxHeight / image.height);
  if (scale >= 1) return null;
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  return { png: encodePng(scaleDown(image, width, height)), width, height };
}
