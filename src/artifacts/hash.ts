import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

export interface FileDigest {
  /** Lower-case hex sha256. */
  sha256: string;
  size: number;
}

/** Hash a file by streaming it (constant memory). */
export async function sha256File(filePath: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(filePath) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}

export function sha256Bytes(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

/** Whether `value` is 64 hex characters (either case). */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}
