/** Command input: FILE, or standard input for `-` (or no FILE). */
import { open } from 'node:fs/promises';
import { UsageError } from './exit.ts';

/**
 * The bytes of a stream (stdin, a fetched body), at most `limit`: reading stops once that many came
 * in, and leaving the loop early ends the stream (the rest is never read).
 */
export async function readChunks(
  stream: AsyncIterable<Uint8Array | string>,
  limit = Number.MAX_SAFE_INTEGER,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buf =
      typeof chunk === 'string'
        ? Buffer.from(chunk)
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    chunks.push(buf);
    total += buf.length;
    if (total >= limit) break;
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

/**
 * The bytes of FILE (or stdin), at most `limit` bytes (callers pass their maximum + 1 to detect
 * oversized input without reading all of it). Unreadable input is a usage error naming the file.
 */
export async function readInput(file: string | undefined, limit = Number.MAX_SAFE_INTEGER): Promise<Buffer> {
  if (file === undefined || file === '-') {
    if (process.stdin.isTTY) throw new UsageError('no input: give FILE or pipe data to stdin');
    return readChunks(process.stdin, limit);
  }
  const unreadable = (err: unknown) =>
    new UsageError(
      `cannot read ${JSON.stringify(file)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    throw unreadable(err);
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < limit) {
      const buf = Buffer.alloc(Math.min(1024 * 1024, limit - total));
      const { bytesRead } = await handle.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
    }
    return Buffer.concat(chunks);
  } catch (err) {
    throw unreadable(err);
  } finally {
    await handle.close();
  }
}

/** A non-negative integer flag of at most `maxDigits` digits; undefined when the flag is absent. */
export function intFlag(name: string, value: string | undefined, maxDigits = 9): number | undefined {
  if (value === undefined) return undefined;
  if (!new RegExp(`^\\d{1,${maxDigits}}$`).test(value)) {
    throw new UsageError(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}
