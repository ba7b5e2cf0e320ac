/**
 * An APK's metadata read from a file: the read, then the pure parser (protocol/apk/apk-reader.ts).
 * A missing file is `NOT_FOUND`, a directory is not a valid APK, any other read failure is `INTERNAL`.
 */
import { readFile } from 'node:fs/promises';
import { BridgeError } from '../errors.ts';
import { type ApkInfo, parseApkInfo } from '../protocol/apk/apk-reader.ts';
import { invalidApk } from '../protocol/apk/apk-zip.ts';

export async function readApkInfo(source: string | Uint8Array): Promise<ApkInfo> {
  if (typeof source !== 'string') return parseApkInfo(source);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(source);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new BridgeError('NOT_FOUND', `APK not found: ${source}`, { cause: error });
    if (code === 'EISDIR') throw invalidApk(`${source} is a directory`, error);
    throw new BridgeError('INTERNAL', `cannot read APK ${source}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return parseApkInfo(bytes);
}
