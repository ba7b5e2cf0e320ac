/**
 * Minimal, bounds-checked ZIP reader for APKs (pure: bytes in, bytes out). It reads the end of
 * central directory record and the central directory, and extracts single entries (stored or
 * deflated) with a size cap and a CRC check. ZIP64, multi-disk archives and encrypted entries are
 * rejected: APKs use none of them.
 *
 * Every failure is a `BridgeError('INVALID_ARGUMENT', 'not a valid APK: <reason>')`.
 */
import { inflateRawSync } from 'node:zlib';
import { BridgeError } from '../../errors.ts';

const EOCD_SIGNATURE = 0x06054b50;
const CDFH_SIGNATURE = 0x02014b50;
const LFH_SIGNATURE = 0x04034b50;
const EOCD_SIZE = 22;
const CDFH_SIZE = 46;
const LFH_SIZE = 30;
const MAX_COMMENT = 0xffff;

export function invalidApk(reason: string, cause?: unknown): BridgeError {
  return new BridgeError(
    'INVALID_ARGUMENT',
    `not a valid APK: ${reason}`,
    cause === undefined ? {} : { cause },
  );
}

export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

export interface ZipDirectory {
  entries: ZipEntry[];
  /** Offset of the central directory (the APK Signing Block, if any, ends right before it). */
  centralDirectoryOffset: number;
  centralDirectorySize: number;
  eocdOffset: number;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function findEocd(bytes: Uint8Array, dv: DataView): number {
  if (bytes.length < EOCD_SIZE) throw invalidApk('too short for a ZIP archive');
  const lowest = Math.max(0, bytes.length - EOCD_SIZE - MAX_COMMENT);
  for (let pos = bytes.length - EOCD_SIZE; pos >= lowest; pos--) {
    if (dv.getUint32(pos, true) !== EOCD_SIGNATURE) continue;
    const commentLength = dv.getUint16(pos + 20, true);
    if (pos + EOCD_SIZE + commentLength === bytes.length) return pos;
  }
  throw invalidApk('no ZIP end of central directory record');
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

export function readZipDirectory(bytes: Uint8Array): ZipDirectory {
  const dv = view(bytes);
  const eocd = findEocd(bytes, dv);
  const disk = dv.getUint16(eocd + 4, true);
  const cdDisk = dv.getUint16(eocd + 6, true);
  const entriesOnDisk = dv.getUint16(eocd + 8, true);
  const totalEntries = dv.getUint16(eocd + 10, true);
  const cdSize = dv.getUint32(eocd + 12, true);
  const cdOffset = dv.getUint32(eocd + 16, true);
  if (disk !== 0 || cdDisk !== 0 || entriesOnDisk !== totalEntries) {
    throw invalidApk('multi-disk ZIP archives are not supported');
  }
  if (totalEntries === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    throw invalidApk('ZIP64 archives are not supported');
  }
  if (cdOffset + cdSize !== eocd) {
    throw invalidApk('central directory does not end at the end of central directory record');
  }
  if (totalEntries * CDFH_SIZE > cdSize) throw invalidApk('central directory too small for its entry count');

  const entries: ZipEntry[] = [];
  let pos = cdOffset;
  for (let i = 0; i < totalEntries; i++) {
    if (pos + CDFH_SIZE > eocd) throw invalidApk(`central directory entry ${i} is truncated`);
    if (dv.getUint32(pos, true) !== CDFH_SIGNATURE)
      throw invalidApk(`bad central directory entry ${i} signature`);
    const nameLength = dv.getUint16(pos + 28, true);
    const extraLength = dv.getUint16(pos + 30, true);
    const commentLength = dv.getUint16(pos + 32, true);
    const next = pos + CDFH_SIZE + nameLength + extraLength + commentLength;
    if (next > eocd) throw invalidApk(`central directory entry ${i} is truncated`);
    entries.push({
      name: utf8.decode(bytes.subarray(pos + CDFH_SIZE, pos + CDFH_SIZE + nameLength)),
      flags: dv.getUint16(pos + 8, true),
      method: dv.getUint16(pos + 10, true),
      crc32: dv.getUint32(pos + 16, true),
      compressedSize: dv.getUint32(pos + 20, true),
      uncompressedSize: dv.getUint32(pos + 24, true),
      localHeaderOffset: dv.getUint32(pos + 42, true),
    });
    pos = next;
  }
  if (pos !== eocd) throw invalidApk('central directory size does not match its entries');
  return { entries, centralDirectoryOffset: cdOffset, centralDirectorySize: cdSize, eocdOffset: eocd };
}

/** Finds exactly one entry called `name`; duplicates are rejected (Android refuses them too). */
export function findZipEntry(directory: ZipDirectory, name: string): ZipEntry | undefined {
  let found: ZipEntry | undefined;
  for (const entry of directory.entries) {
    if (entry.name !== name) continue;
    if (found !== undefined) throw invalidApk(`duplicate ZIP entry ${name}`);
    found = entry;
  }
  return found;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Extracts one entry, refusing anything that would inflate beyond `maxBytes`. */
export function extractZipEntry(
  bytes: Uint8Array,
  directory: ZipDirectory,
  entry: ZipEntry,
  maxBytes: number,
): Uint8Array {
  const dv = view(bytes);
  const at = entry.localHeaderOffset;
  if (entry.flags & 1) throw invalidApk(`ZIP entry ${entry.name} is encrypted`);
  if (entry.uncompressedSize > maxBytes) {
    throw invalidApk(`ZIP entry ${entry.name} is too large (${entry.uncompressedSize} > ${maxBytes} bytes)`);
  }
  if (at + LFH_SIZE > directory.centralDirectoryOffset)
    throw invalidApk(`ZIP entry ${entry.name} lies outside the archive`);
  if (dv.getUint32(at, true) !== LFH_SIGNATURE)
    throw invalidApk(`bad local header signature for ${entry.name}`);
  const dataStart = at + LFH_SIZE + dv.getUint16(at + 26, true) + dv.getUint16(at + 28, true);
  const dataEnd = dataStart + entry.compressedSize;
  if (dataEnd > directory.centralDirectoryOffset)
    throw invalidApk(`ZIP entry ${entry.name} data is truncated`);
  const data = bytes.subarray(dataStart, dataEnd);

  let content: Uint8Array;
  if (entry.method === 0) {
    content = data;
  } else if (entry.method === 8) {
    try {
      content = inflateRawSync(data, { maxOutputLength: Math.max(1, maxBytes) });
    } catch (error) {
      throw invalidApk(`cannot inflate ZIP entry ${entry.name}: ${(error as Error).message}`, error);
    }
  } else {
    throw invalidApk(`ZIP entry ${entry.name} uses unsupported compression method ${entry.method}`);
  }
  if (content.length !== entry.uncompressedSize)
    throw invalidApk(`ZIP entry ${entry.name} has the wrong size`);
  if (crc32(content) !== entry.crc32) throw invalidApk(`ZIP entry ${entry.name} fails its CRC check`);
  return content;
}
