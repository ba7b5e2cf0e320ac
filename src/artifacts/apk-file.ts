/**
 * APK (and dex jar) metadata read from a file by ranges: the pure range parsers of protocol/apk ask
 * for the byte ranges they need (the ZIP directory from the end of the file, then the entries they
 * decode) and this module reads exactly those, so a large APK is never read whole into memory.
 * A missing file is `NOT_FOUND`, a directory is not a valid APK, any other read failure is `INTERNAL`.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { BridgeError } from '../errors.ts';
import { type ApkInfo, apkInfoReads, parseApkInfo } from '../protocol/apk/apk-reader.ts';
import { invalidApk, type RangeReads } from '../protocol/apk/apk-zip.ts';
import { type DexJarInfo, dexJarReads } from '../protocol/apk/dex.ts';

export interface RangeReadOptions {
  /** Called with each range read (offset, length), before it is read. */
  onRead?: (offset: number, length: number) => void;
}

function readError(file: string, error: unknown): BridgeError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new BridgeError('NOT_FOUND', `APK not found: ${file}`, { cause: error });
  if (code === 'EISDIR') return invalidApk(`${file} is a directory`, error);
  return new BridgeError('INTERNAL', `cannot read APK ${file}: ${(error as Error).message}`, {
    cause: error,
  });
}

async function readExactly(
  handle: FileHandle,
  offset: number,
  length: number,
  file: string,
): Promise<Uint8Array> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, offset + filled);
    // The file shrank under us: what was read is no longer the archive the directory described.
    if (bytesRead === 0) throw invalidApk(`${file} changed while it was read (ended at ${offset + filled})`);
    filled += bytesRead;
  }
  return buffer;
}

/** Run a range parser over the file at `file`, reading only the ranges it asks for. */
export async function readFileRanges<T>(
  file: string,
  reads: (size: number) => RangeReads<T>,
  options: RangeReadOptions = {},
): Promise<T> {
  let handle: FileHandle;
  let size: number;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw readError(file, error);
  }
  try {
    try {
      const stat = await handle.stat();
      if (stat.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
      size = stat.size;
    } catch (error) {
      throw readError(file, error);
    }
    const parser = reads(size);
    let step = parser.next();
    while (!step.done) {
      const { offset, length } = step.value;
      if (!(offset >= 0 && length >= 0 && offset + length <= size)) {
        throw invalidApk(`read of ${length} bytes at ${offset} is outside ${file}`);
      }
      options.onRead?.(offset, length);
      let bytes: Uint8Array;
      try {
        bytes = await readExactly(handle, offset, length, file);
      } catch (error) {
        if (error instanceof BridgeError) throw error;
        throw readError(file, error);
      }
      step = parser.next(bytes);
    }
    return step.value;
  } finally {
    await handle.close();
  }
}

/** An APK's metadata, from a file (read by ranges) or from bytes already in memory. */
export async function readApkInfo(
  source: string | Uint8Array,
  options: RangeReadOptions = {},
): Promise<ApkInfo> {
  if (typeof source !== 'string') return parseApkInfo(source);
  return readFileRanges(source, apkInfoReads, options);
}

/** What a dex jar file defines (read by ranges). */
export function readDexJar(file: string, options: RangeReadOptions = {}): Promise<DexJarInfo> {
  return readFileRanges(file, dexJarReads, options);
}
