/**
 * Fast UTF-8 → string decoding for snapshot XML on Node 20. V8's UTF-8 decoder (behind
 * `buffer.toString('utf8')` and `TextDecoder`) drops to a slow per-character path for the whole
 * buffer once it holds one non-ASCII byte; on real mostly-ASCII dumps with some CJK/Cyrillic/emoji
 * text, ICU's `transcode` to UTF-16LE plus a UTF-16 copy into the string is 2–5× faster (measured
 * in test/bench/RESULTS.md). ASCII-only buffers take the latin1 copy path. Same result as
 * `toString('utf8')` for valid UTF-8 (the callers validate first). Pure.
 */
import { type Buffer, isAscii, transcode } from 'node:buffer';

export function decodeUtf8(bytes: Buffer): string {
  if (bytes.length < 4096) return bytes.toString('utf8');
  if (isAscii(bytes)) return bytes.toString('latin1');
  return transcode(bytes, 'utf8', 'ucs2').toString('ucs2');
}
