/**
 * Live screen test helpers: the golden fixtures (test/fixtures/screen/) and a real decoder (Debian's
 * ffmpeg) that turns Annex B access units into raw RGB frames, to check that pictures decode and
 * what they show.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const SCREEN_FIXTURES = path.join(import.meta.dirname, '../fixtures/screen');

/** A `.hex` fixture: hex byte pairs separated by white space. */
export function hexFixture(name: string): Uint8Array {
  // Hex bytes; `#` starts a comment to the end of the line; whitespace is ignored (README.md there).
  const text = readFileSync(path.join(SCREEN_FIXTURES, name), 'utf8').replace(/#.*$/gm, '');
  const digits = text.replace(/\s+/g, '');
  if (!/^(?:[0-9a-f]{2})*$/i.test(digits)) throw new Error(`${name}: not hex byte pairs`);
  return Uint8Array.from(digits.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
}

export function binaryFixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(path.join(SCREEN_FIXTURES, name)));
}

export interface DecodedFrames {
  width: number;
  height: number;
  /** RGB24 pixels, one buffer per decoded picture. */
  frames: Buffer[];
  /** What ffmpeg wrote to stderr (decode errors show here). */
  log: string;
}

/**
 * Decode an Annex B H.264 stream with ffmpeg into RGB24 frames of `width`×`height`, each picture
 * once (`-fps_mode passthrough`: a stream whose SPS timing changes midway, as when another encoder
 * takes over, is not padded to a constant frame rate with repeated pictures).
 */
export function decodeH264(stream: Uint8Array, width: number, height: number): Promise<DecodedFrames> {
  return new Promise((resolve, reject) => {
    const ff = spawn(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-f',
        'h264',
        '-i',
        'pipe:0',
        '-fps_mode',
        'passthrough',
        '-f',
        'rawvideo',
        '-pix_fmt',
        'rgb24',
        'pipe:1',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const out: Buffer[] = [];
    let log = '';
    ff.stdout.on('data', (d: Buffer) => out.push(d));
    ff.stderr.on('data', (d: Buffer) => {
      log += d.toString('utf8');
    });
    ff.on('error', reject);
    ff.on('close', () => {
      const all = Buffer.concat(out);
      const size = width * height * 3;
      const frames: Buffer[] = [];
      for (let at = 0; at + size <= all.length; at += size) frames.push(all.subarray(at, at + size));
      resolve({ width, height, frames, log });
    });
    ff.stdin.on('error', () => undefined);
    ff.stdin.end(Buffer.from(stream));
  });
}

/** The RGB of one pixel of a decoded frame. */
export function pixelAt(
  frames: DecodedFrames,
  index: number,
  x: number,
  y: number,
): [number, number, number] {
  const frame = frames.frames[index];
  if (frame === undefined) throw new Error(`no decoded frame ${index} (of ${frames.frames.length})`);
  const i = (y * frames.width + x) * 3;
  return [frame[i] as number, frame[i + 1] as number, frame[i + 2] as number];
}

/** Android's shown-touch ring colour (the simulator draws touches red). */
export const isRed = ([r, g, b]: [number, number, number]) => r > 150 && g < 110 && b < 130;
/** Whether a red touch mark is within `radius` of (x, y) in picture `index`. */
export function redNear(decoded: DecodedFrames, index: number, x: number, y: number, radius = 4): boolean {
  for (let dy = -radius; dy <= radius; dy++) {
    for (let dx = -radius; dx <= radius; dx++)
      if (isRed(pixelAt(decoded, index, x + dx, y + dy))) return true;
  }
  return false;
}

/** Whether pictures `a` and `b` differ around (x, y): a touch mark came (or an old one went). */
export function changedNear(
  decoded: DecodedFrames,
  a: number,
  b: number,
  x: number,
  y: number,
  radius = 8,
): boolean {
  let diff = 0;
  let n = 0;
  for (let yy = Math.max(0, y - radius); yy <= Math.min(decoded.height - 1, y + radius); yy++) {
    for (let xx = Math.max(0, x - radius); xx <= Math.min(decoded.width - 1, x + radius); xx++) {
      const p = pixelAt(decoded, a, xx, yy);
      const q = pixelAt(decoded, b, xx, yy);
      diff += Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]);
      n++;
    }
  }
  return diff / n > 6;
}

/** `bytes` cut at the given offsets (taken modulo its length + 1, sorted, deduplicated): any chunking. */
export function cutAt(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [...new Set(at.map((a) => a % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
}
