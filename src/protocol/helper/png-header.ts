/**
 * What the bridge checks of a screenshot before it serves one: the PNG signature and a well-formed
 * IHDR chunk first (length 13, CRC-32 intact, sane size and format), read as a pure function of the
 * bytes. `screencap -p` that fails prints text (or nothing) instead: the error names what came back.
 */
import { BridgeError } from '../../errors.ts';

export const PNG_MAGIC = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
/** Largest side accepted (Android screens are far smaller; a corrupt header is refused). */
export const MAX_PNG_SIDE = 32_768;

export interface PngHeader {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 (ISO 3309; what every PNG chunk carries over its type and data). */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A printable preview of what came back instead of a PNG (at most 80 characters, no controls). */
function preview(bytes: Uint8Array): string {
  if (bytes.length === 0) return 'nothing';
  const text = Buffer.from(bytes.subarray(0, 80))
    .toString('latin1')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
  return `${bytes.length} bytes starting ${JSON.stringify(text)}`;
}

function refuse(what: string, bytes: Uint8Array): BridgeError {
  return new BridgeError(
    'HELPER_FAILED',
    `screencap -p did not answer a PNG: ${what} (got ${preview(bytes)})`,
    {
      details: { bytes: bytes.length },
    },
  );
}

/** The header of the PNG in `bytes`, or HELPER_FAILED naming what is wrong. */
export function readPngHeader(bytes: Uint8Array): PngHeader {
  if (bytes.length < 8 || PNG_MAGIC.some((b, i) => bytes[i] !== b)) throw refuse('no PNG signature', bytes);
  if (bytes.length < 33) throw refuse('truncated before the end of IHDR', bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = String.fromCharCode(...bytes.subarray(12, 16));
  if (view.getUint32(8) !== 13 || type !== 'IHDR')
    throw refuse('the first chunk is not a 13-byte IHDR', bytes);
  if (crc32(bytes.subarray(12, 29)) !== view.getUint32(29)) throw refuse('IHDR CRC-32 mismatch', bytes);
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  if (width < 1 || height < 1 || width > MAX_PNG_SIDE || height > MAX_PNG_SIDE) {
    throw refuse(`size ${width}x${height} outside 1..${MAX_PNG_SIDE}`, bytes);
  }
  const bitDepth = bytes[24] as number;
  const colorType = bytes[25] as number;
  if (![1, 2, 4, 8, 16].includes(bitDepth) || ![0, 2, 3, 4, 6].includes(colorType)) {
    throw refuse(`bit depth ${bitDepth} / colour type ${colorType} is not PNG`, bytes);
  }
  return { width, height, bitDepth, colorType };
}

/** One PNG chunk: length, type, data and the CRC of type and data. */
export function pngChunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
