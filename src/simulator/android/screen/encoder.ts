/**
 * The simulator's H.264 encoder: Debian's ffmpeg with libx264 (`-preset ultrafast -tune
 * zerolatency`: no B-frames, no lookahead, one access unit out per frame in), raw RGB frames in on
 * stdin, a key frame every `gopFrames` frames with the SPS and PPS repeated before each (x264's
 * repeat-headers, as the raw `h264` muxer keeps headers in the stream). Its output is muxed into AVI
 * on stdout only to know where each access unit ends (one `00dc` chunk per packet, written as soon
 * as it is encoded): the bytes handed on are the Annex B access units themselves.
 *
 * One ffmpeg per stream, killed by `close()`; every running encoder is counted (`runningEncoders`)
 * so tests can prove none is left behind.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface EncoderOptions {
  width: number;
  height: number;
  /** Frames per second the input is timed at. */
  fps: number;
  bitRate: number;
  /** A key frame every this many frames. */
  gopFrames: number;
  /** One Annex B access unit (SPS/PPS before a key frame's slice). */
  onUnit(unit: Uint8Array): void;
  /** ffmpeg took in what it was behind on: `ready` is true again. */
  onReady?(): void;
  /** ffmpeg exited (after close(), or by itself: `error` says why). */
  onExit?(error: Error | null): void;
}

const running = new Set<H264Encoder>();

/** How many simulator encoders (ffmpeg processes) run in this process. */
export function runningEncoders(): number {
  return running.size;
}

/** The pids of the running encoders' ffmpeg processes. */
export function runningEncoderPids(): number[] {
  return [...running].map((e) => e.pid).filter((p): p is number => p !== undefined);
}

const FOURCC_LIST = 0x4c495354; // 'LIST'
const FOURCC_MOVI = 0x6d6f7669; // 'movi'
const FOURCC_RIFF = 0x52494646; // 'RIFF'

/** The packets of an AVI stream read as it arrives: the `movi` list's `##dc`/`##db` chunks. */
export class AviChunkReader {
  #buf: Buffer = Buffer.alloc(0);
  #inMovi = false;

  push(chunk: Buffer): Buffer[] {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: Buffer[] = [];
    for (;;) {
      if (this.#buf.length < 12) break;
      const id = this.#buf.readUInt32BE(0);
      if (id === FOURCC_RIFF || id === FOURCC_LIST) {
        // A list: step inside (RIFF, hdrl, movi), never over it.
        if (this.#buf.readUInt32BE(8) === FOURCC_MOVI) this.#inMovi = true;
        this.#buf = this.#buf.subarray(12);
        continue;
      }
      const size = this.#buf.readUInt32LE(4);
      const total = 8 + size + (size & 1);
      if (this.#buf.length < total) break;
      const kind = this.#buf.toString('latin1', 2, 4);
      if (this.#inMovi && (kind === 'dc' || kind === 'db') && size > 0) {
        out.push(Buffer.from(this.#buf.subarray(8, 8 + size)));
      }
      this.#buf = this.#buf.subarray(total);
    }
    return out;
  }
}

export class H264Encoder {
  readonly #ff: ChildProcessWithoutNullStreams;
  readonly #frameBytes: number;
  #closed = false;
  #exited = false;
  readonly exited: Promise<void>;

  constructor(options: EncoderOptions) {
    const { width, height, fps, bitRate, gopFrames } = options;
    this.#frameBytes = width * height * 3;
    // biome-ignore format: one ffmpeg option per line pair
    const args = [
      '-hide_banner', '-loglevel', 'error',
      // No probing of the raw input: at a low rate (1 fps) ffmpeg would hold the first frames back.
      '-probesize', '32',
      '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${width}x${height}`, '-r', String(fps), '-i', 'pipe:0',
      '-an', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p',
      '-g', String(gopFrames), '-keyint_min', String(gopFrames), '-sc_threshold', '0',
      '-b:v', String(bitRate), '-maxrate', String(bitRate), '-bufsize', String(bitRate),
      '-x264-params', 'repeat-headers=1', '-threads', '1',
      '-flush_packets', '1', '-f', 'avi', 'pipe:1',
    ];
    this.#ff = spawn('ffmpeg', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    running.add(this);
    const reader = new AviChunkReader();
    let stderr = '';
    this.#ff.stdout.on('data', (chunk: Buffer) => {
      if (this.#closed) return;
      for (const unit of reader.push(chunk)) options.onUnit(unit);
    });
    this.#ff.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    this.#ff.stdin.on('error', () => undefined);
    this.#ff.stdin.on('drain', () => {
      if (!this.#closed) options.onReady?.();
    });
    this.exited = new Promise<void>((resolve) => {
      const done = (error: Error | null) => {
        if (this.#exited) return;
        this.#exited = true;
        running.delete(this);
        options.onExit?.(error);
        resolve();
      };
      this.#ff.once('error', (err) => done(err));
      this.#ff.once('close', (code, signal) =>
        done(
          this.#closed || code === 0
            ? null
            : new Error(`ffmpeg exited ${code ?? signal}: ${stderr.trim().slice(0, 300)}`),
        ),
      );
    });
  }

  get pid(): number | undefined {
    return this.#ff.pid;
  }

  /** Whether ffmpeg can take a frame now (its stdin is not behind). */
  get ready(): boolean {
    return !this.#closed && !this.#exited && !this.#ff.stdin.writableNeedDrain;
  }

  /** Feed one RGB24 frame of the encoder's size; false when it was not taken (busy or closed). */
  write(frame: Uint8Array): boolean {
    if (!this.ready) return false;
    if (frame.length !== this.#frameBytes) {
      throw new RangeError(`a frame is ${this.#frameBytes} bytes, got ${frame.length}`);
    }
    this.#ff.stdin.write(frame);
    return true;
  }

  /** Stop encoding and kill ffmpeg; resolves once it has exited. Idempotent. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#ff.stdin.destroy();
      this.#ff.kill('SIGKILL');
    }
    return this.exited;
  }
}
