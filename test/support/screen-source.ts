/**
 * A live screen device stream for tests: a real H.264 stream made by Debian's ffmpeg (libx264, the
 * encoder settings of a live stream), cut into access units by the bridge's own Annex B splitter,
 * played as a `ScreenSource` (start, config, frames; looped with growing presentation times).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type {
  ScreenEvent,
  ScreenPacket,
  ScreenSource,
  ScreenStreamInfo,
} from '../../src/helpers/screen/source.ts';
import { splitParameterSets, splitStream } from '../../src/protocol/screen/annexb.ts';

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

/**
 * Cut an Annex B stream into config packets (SPS/PPS) and access units, as the device driver does
 * (the bridge's own splitter, src/protocol/screen/annexb.ts).
 */
export function splitAccessUnits(stream: Uint8Array, frameUs = 33_333): ScreenPacket[] {
  const packets: ScreenPacket[] = [];
  let index = 0;
  for (const unit of splitStream(stream)) {
    const { config, picture } = splitParameterSets(unit.data);
    if (config !== null) packets.push({ pts: index * frameUs, config: true, key: false, data: config });
    if (picture !== null && unit.picture) {
      packets.push({ pts: index++ * frameUs, config: false, key: unit.key, data: picture });
    }
  }
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
