/**
 * Fast UTF-8 → string decoding for snapshot XML on Node 20, whose UTF-8 decoder falls to a slow
 * per-character path for a whole buffer as soon as it holds one non-ASCII byte (2–4× slower than the
 * ASCII path on a real mostly-ASCII uiautomator dump). Long ASCII stretches are decoded as latin1
 * (a byte copy) and only the stretches around non-ASCII bytes through the UTF-8 decoder; the pieces
 * are joined once. Same result as `buffer.toString('utf8')` for valid UTF-8 (the caller validates:
 * a maximal run of bytes >= 0x80 then always holds whole sequences). Pure.
 */
import { type Buffer, isAscii } from 'node:buffer';

/** ASCII gaps shorter than this stay inside the UTF-8 piece (fewer, larger pieces). */
const GAP = 48;

/** Index of the first byte >= 0x80 at or after `from` (4 bytes per step once aligned), else `n`. */
function nextHigh(bytes: Uint8Array, words: Uint32Array, from: number, n: number): number {
  let i = from;
  while (i < n && (i & 3) !== 0) {
    if ((bytes[i] as number) >= 128) return i;
    i++;
  }
  let w = i >>> 2;
  const wn = words.length;
  while (w < wn && ((words[w] as number) & 0x80808080) === 0) w++;
  i = w << 2;
  while (i < n) {
    if ((bytes[i] as number) >= 128) return i;
    i++;
  }
  return n;
}

export function decodeUtf8(bytes: Buffer): string {
  const n = bytes.length;
  if (n < 4096 || (bytes.byteOffset & 3) !== 0) return bytes.toString('utf8');
  if (isAscii(bytes)) return bytes.toString('latin1');
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, n >>> 2);
  const pieces: string[] = [];
  let done = 0;
  let i = nextHigh(bytes, words, 0, n);
  while (i < n) {
    const start = i;
    let end: number;
    for (;;) {
      while (i < n && (bytes[i] as number) >= 128) i++;
      end = i;
      const next = nextHigh(bytes, words, i, n);
      i = next;
      if (next >= n || next - end >= GAP) break;
    }
    if (start > done) pieces.push(bytes.toString('latin1', done, start));
    pieces.push(bytes.toString('utf8', start, end));
    done = end;
  }
  if (done < n) pieces.push(bytes.toString('latin1', done, n));
  return pieces.join('');
}
