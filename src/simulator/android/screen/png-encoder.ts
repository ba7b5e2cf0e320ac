/**
 * A minimal PNG encoder for the simulator's screen (`screencap -p`): 8-bit RGB, filter 0 on every
 * row, one IDAT compressed with node:zlib, CRC-32 per chunk (the bridge's own, which reads the
 * header back). No native dependency.
 */
import { deflateSync } from 'node:zlib';
import { PNG_MAGIC, pngChunk } from '../../../protocol/helper/png-header.ts';

/** Encode `rgb` (width × height × 3 bytes, rows top to bottom) as a PNG file. */
export function encodePng(width: number, height: number, rgb: Uint8Array): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`PNG size must be positive integers, got ${width}x${height}`);
  }
  if (rgb.length !== width * height * 3) {
    throw new RangeError(`expected ${width * height * 3} RGB bytes, got ${rgb.length}`);
  }
  const stride = width * 3;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0; // filter: none
    raw.set(rgb.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour
  ihdr[10] = 0; // compression
  ihdr[11] = 0; // filter method
  ihdr[12] = 0; // no interlace
  return Buffer.concat([
    PNG_MAGIC,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw, { level: 6 })),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}
