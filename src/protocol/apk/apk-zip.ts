/**
 * Minimal, bounds-checked ZIP reader for APKs (pure: no I/O). It reads the end of central directory
 * record and the central directory from the end of the archive, and extracts single entries (stored
 * or deflated) with a size cap and a CRC check. Every reader is a range parser (`RangeReads`): it
 * asks for the byte ranges it needs, so a file is never read whole (the driver reading a file lives
 * in artifacts/apk-file.ts); `readFromBytes` drives one over a buffer. ZIP64, multi-disk archives and encrypted entries are
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

/** Bytes [offset, offset + length) of the archive, asked for by a range parser. */
export interface RangeRequest {
  offset: number;
  length: number;
}

/**
 * A parser that reads an archive by ranges: it yields each range it needs and is resumed with
 * exactly those bytes (the driver owns the I/O: `readFromBytes` below over a buffer, or a file
 * reader above this floor). It never asks for a range outside [0, size) of the archive it was
 * given the size of.
 */
export type RangeReads<T> = Generator<RangeRequest, T, Uint8Array>;

/** Run a range parser over an archive held whole in memory (the parser sees subarrays, no copies). */
export function readFromBytes<T>(bytes: Uint8Array, reads: (size: number) => RangeReads<T>): T {
  const parser = reads(bytes.length);
  let step = parser.next();
  while (!step.done) {
    const { offset, length } = step.value;
    if (!(offset >= 0 && length >= 0 && offset + length <= bytes.length)) {
      throw invalidApk(`read of ${length} bytes at ${offset} is outside the archive`);
    }
    step = parser.next(bytes.subarray(offset, offset + length));
  }
  return step.value;
}

/** Largest central directory read: ~100k entries of an ordinary name length. */
export const MAX_CENTRAL_DIRECTORY = 16 << 20;

function findEocd(tail: Uint8Array, tailOffset: number, size: number): number {
  const dv = view(tail);
  for (let pos = tail.length - EOCD_SIZE; pos >= 0; pos--) {
    if (dv.getUint32(pos, true) !== EOCD_SIGNATURE) continue;
    const commentLength = dv.getUint16(pos + 20, true);
    if (tailOffset + pos + EOCD_SIZE + commentLength === size) return pos;
  }
  throw invalidApk('no ZIP end of central directory record');
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/**
 * The ZIP directory of an archive of `size` bytes, read from its end: the end of central directory
 * record (within the last 64 KiB + 22 bytes), then the central directory it points at.
 */
export function* zipDirectoryReads(size: number): RangeReads<ZipDirectory> {
  if (size < EOCD_SIZE) throw invalidApk('too short for a ZIP archive');
  const tailLength = Math.min(size, EOCD_SIZE + MAX_COMMENT);
  const tailOffset = size - tailLength;
  const tail = yield { offset: tailOffset, length: tailLength };
  const at = findEocd(tail, tailOffset, size);
  const dv = view(tail);
  const eocd = tailOffset + at;
  const disk = dv.getUint16(at + 4, true);
  const cdDisk = dv.getUint16(at + 6, true);
  const entriesOnDisk = dv.getUint16(at + 8, true);
  const totalEntries = dv.getUint16(at + 10, true);
  const cdSize = dv.getUint32(at + 12, true);
  const cdOffset = dv.getUint32(at + 16, true);
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
  if (cdSize > MAX_CENTRAL_DIRECTORY) {
    throw invalidApk(`central directory is too large (${cdSize} > ${MAX_CENTRAL_DIRECTORY} bytes)`);
  }
  // The directory is usually within the tail already read.
  const cd =
    cdOffset >= tailOffset
      ? tail.subarray(cdOffset - tailOffset, at)
      : yield { offset: cdOffset, length: cdSize };
  return {
    entries: centralDirectoryEntries(cd, totalEntries),
    centralDirectoryOffset: cdOffset,
    centralDirectorySize: cdSize,
    eocdOffset: eocd,
  };
}

function centralDirectoryEntries(cd: Uint8Array, totalEntries: number): ZipEntry[] {
  const dv = view(cd);
  const end = cd.length;
  const entries: ZipEntry[] = [];
  let pos = 0;
  for (let i = 0; i < totalEntries; i++) {
    if (pos + CDFH_SIZE > end) throw invalidApk(`central directory entry ${i} is truncated`);
    if (dv.getUint32(pos, true) !== CDFH_SIGNATURE)
      throw invalidApk(`bad central directory entry ${i} signature`);
    const nameLength = dv.getUint16(pos + 28, true);
    const extraLength = dv.getUint16(pos + 30, true);
    const commentLength = dv.getUint16(pos + 32, true);
    const next = pos + CDFH_SIZE + nameLength + extraLength + commentLength;
    if (next > end) throw invalidApk(`central directory entry ${i} is truncated`);
    entries.push({
      name: utf8.decode(cd.subarray(pos + CDFH_SIZE, pos + CDFH_SIZE + nameLength)),
      flags: dv.getUint16(pos + 8, true),
      method: dv.getUint16(pos + 10, true),
      crc32: dv.getUint32(pos + 16, true),
      compressedSize: dv.getUint32(pos + 20, true),
      uncompressedSize: dv.getUint32(pos + 24, true),
      localHeaderOffset: dv.getUint32(pos + 42, true),
    });
    pos = next;
  }
  if (pos !== end) throw invalidApk('central directory size does not match its entries');
  return entries;
}

/** The ZIP directory of an archive held whole in memory. */
export function readZipDirectory(bytes: Uint8Array): ZipDirectory {
  return readFromBytes(bytes, zipDirectoryReads);
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

/**
 * One entry's content, read by ranges (its local header, then its data): refuses anything that would
 * inflate beyond `maxBytes` before reading it, and checks size and CRC.
 */
export function* zipEntryReads(
  directory: ZipDirectory,
  entry: ZipEntry,
  maxBytes: number,
): RangeReads<Uint8Array> {
  const at = entry.localHeaderOffset;
  if (entry.flags & 1) throw invalidApk(`ZIP entry ${entry.name} is encrypted`);
  if (entry.uncompressedSize > maxBytes) {
    throw invalidApk(`ZIP entry ${entry.name} is too large (${entry.uncompressedSize} > ${maxBytes} bytes)`);
  }
  if (at + LFH_SIZE > directory.centralDirectoryOffset)
    throw invalidApk(`ZIP entry ${entry.name} lies outside the archive`);
  const header = yield { offset: at, length: LFH_SIZE };
  const dv = view(header);
  if (dv.getUint32(0, true) !== LFH_SIGNATURE)
    throw invalidApk(`bad local header signature for ${entry.name}`);
  const dataStart = at + LFH_SIZE + dv.getUint16(26, true) + dv.getUint16(28, true);
  const dataEnd = dataStart + entry.compressedSize;
  if (dataEnd > directory.centralDirectoryOffset)
    throw invalidApk(`ZIP entry ${entry.name} data is truncated`);
  // Deflate never grows data by more than a few bytes per 16 KiB block: a larger compressed size
  // is refused before anything is read.
  if (entry.method === 8 && entry.compressedSize > maxBytes + (maxBytes >>> 6) + 1024) {
    throw invalidApk(`ZIP entry ${entry.name} is too large (${entry.compressedSize} compressed bytes)`);
  }
  if (entry.method !== 0 && entry.method !== 8) {
    throw invalidApk(`ZIP entry ${entry.name} uses unsupported compression method ${entry.method}`);
  }
  if (entry.method === 0 && entry.compressedSize !== entry.uncompressedSize)
    throw invalidApk(`ZIP entry ${entry.name} has the wrong size`);
  const data = yield { offset: dataStart, length: entry.compressedSize };

  let content: Uint8Array;
  if (entry.method === 0) {
    content = data;
  } else {
    try {
      content = inflateRawSync(data, { maxOutputLength: Math.max(1, maxBytes) });
    } catch (error) {
      throw invalidApk(`cannot inflate ZIP entry ${entry.name}: ${(error as Error).message}`, error);
    }
  }
  if (content.length !== entry.uncompressedSize)
    throw invalidApk(`ZIP entry ${entry.name} has the wrong size`);
  if (crc32(content) !== entry.crc32) throw invalidApk(`ZIP entry ${entry.name} fails its CRC check`);
  return content;
}

/** Extracts one entry of an archive held whole in memory (see `zipEntryReads`). */
export function extractZipEntry(
  bytes: Uint8Array,
  directory: ZipDirectory,
  entry: ZipEntry,
  maxBytes: number,
): Uint8Array {
  return readFromBytes(bytes, () => zipEntryReads(directory, entry, maxBytes));
}
