/**
 * A live screen device stream for tests: a real H.264 stream made by Debian's ffmpeg (libx264, the
 * encoder settings of a live stream), cut into access units by a small splitter of its own, played
 * as a `ScreenSource` (start, config, frames; looped with growing presentation times). The splitter
 * here is test support only: the bridge's own Annex B splitter lives in src/protocol/screen/.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type {
  ScreenEvent,
  ScreenPacket,
  ScreenSource,
  ScreenStreamInfo,
} from '../../src/helpers/screen/source.ts';

const run = promisify(execFile);

export interface TestStreamOptions {
  width?: number;
  height?: number;
  frames?: number;
  /** Frames between key frames (`-g`). */
  gop?: number;
  /** Temporal noise strength (ffmpeg's `noise` filter): bigger frames. 0 = none. */
  noise?: number;
}

/** A raw Annex B H.264 stream of ffmpeg's test pattern. */
export async function encodeTestStream(options: TestStreamOptions = {}): Promise<Uint8Array> {
  const { width = 720, height = 1280, frames = 60, gop = 30, noise = 0 } = options;
  const { stdout } = await run(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=${width}x${height}:rate=30`,
      '-frames:v',
      String(frames),
      ...(noise > 0 ? ['-vf', `noise=alls=${noise}:allf=t`] : []),
      '-pix_fmt',
      'yuv420p',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-tune',
      'zerolatency',
      '-g',
      String(gop),
      '-f',
      'h264',
      '-',
    ],
    { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 },
  );
  return new Uint8Array(stdout);
}

/** Start offsets (of the start code) and NAL header offsets of every NAL unit in `stream`. */
function nalUnits(stream: Uint8Array): Array<{ start: number; header: number; end: number }> {
  const units: Array<{ start: number; header: number; end: number }> = [];
  for (let i = 0; i + 2 < stream.byteLength; i++) {
    if (stream[i] === 0 && stream[i + 1] === 0 && stream[i + 2] === 1) {
      const start = i > 0 && stream[i - 1] === 0 ? i - 1 : i;
      if (units.length > 0) units.at(-1)!.end = start;
      units.push({ start, header: i + 3, end: stream.byteLength });
      i += 2;
    }
  }
  return units;
}

/**
 * Cut an Annex B stream into config packets (SPS/PPS) and access units: an access unit starts at an
 * AUD, an SEI, or the first slice of a picture (first_mb_in_slice = 0) that follows a slice.
 */
export function splitAccessUnits(stream: Uint8Array, frameUs = 33_333): ScreenPacket[] {
  const packets: ScreenPacket[] = [];
  let config: Array<[number, number]> = [];
  let unit: { from: number; to: number; key: boolean; slices: number } | null = null;
  let index = 0;
  const flushUnit = () => {
    if (unit !== null && unit.slices > 0) {
      packets.push({
        pts: index++ * frameUs,
        config: false,
        key: unit.key,
        data: stream.slice(unit.from, unit.to),
      });
    }
    unit = null;
  };
  const flushConfig = () => {
    if (config.length === 0) return;
    const data = new Uint8Array(config.reduce((n, [a, b]) => n + b - a, 0));
    let at = 0;
    for (const [a, b] of config) {
      data.set(stream.subarray(a, b), at);
      at += b - a;
    }
    packets.push({ pts: index * frameUs, config: true, key: false, data });
    config = [];
  };
  for (const nal of nalUnits(stream)) {
    const type = stream[nal.header]! & 0x1f;
    if (type === 7 || type === 8) {
      flushUnit();
      config.push([nal.start, nal.end]);
      continue;
    }
    flushConfig();
    const isSlice = type === 1 || type === 5;
    const firstSlice = isSlice && (stream[nal.header + 1]! & 0x80) !== 0;
    if (unit !== null && (((type === 9 || type === 6) && unit.slices > 0) || (firstSlice && unit.slices > 0)))
      flushUnit();
    if (unit === null) unit = { from: nal.start, to: nal.end, key: false, slices: 0 };
    unit.to = nal.end;
    if (isSlice) unit.slices++;
    if (type === 5) unit.key = true;
  }
  flushUnit();
  return packets;
}

export interface TestScreenSourceOptions {
  /** Times the packets play (the config once per play; default: forever, until closed). */
  loops?: number;
  /** Awaited before each frame (a test paces the stream by what its viewers got). */
  pace?: (frameIndex: number) => Promise<void>;
}

/** A `ScreenSource` playing `packets` (from `splitAccessUnits`) as the device would. */
export class TestScreenSource implements ScreenSource {
  readonly #info: ScreenStreamInfo;
  readonly #packets: ScreenPacket[];
  readonly #options: TestScreenSourceOptions;
  #closed = false;
  #wake: (() => void) | undefined;
  framesPlayed = 0;

  constructor(info: ScreenStreamInfo, packets: ScreenPacket[], options: TestScreenSourceOptions = {}) {
    this.#info = info;
    this.#packets = packets;
    this.#options = options;
  }

  get closed(): boolean {
    return this.#closed;
  }

  async *events(): AsyncIterable<ScreenEvent> {
    yield { type: 'start', info: this.#info };
    const span = (this.#packets.filter((p) => !p.config).length + 1) * 33_333;
    for (let loop = 0; !this.#closed && loop < (this.#options.loops ?? Number.POSITIVE_INFINITY); loop++) {
      for (const packet of this.#packets) {
        if (this.#closed) return;
        if (packet.config && loop > 0) continue;
        if (!packet.config) {
          await this.#options.pace?.(this.framesPlayed);
          // A macrotask between frames: the stream never hogs the event loop.
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
            setImmediate(resolve);
          });
          if (this.#closed) return;
          this.framesPlayed++;
        }
        yield { type: 'packet', packet: { ...packet, pts: packet.pts + loop * span } };
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#wake?.();
  }
}
