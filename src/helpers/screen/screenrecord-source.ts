/**
 * The live screen from `screenrecord --output-format=h264 --size WxH --bit-rate N --time-limit T -`
 * over `exec:` (what `adb exec-out` runs; Android 5.0 and later), where the glass agent cannot
 * encode. Its raw Annex B output is cut into access units (AnnexBSplitter) and stamped with the
 * time of arrival (microseconds since the source opened, one clock over every recording). An
 * access unit is known complete when the next starts, or when the output has been quiet for
 * `quietMs` (screenrecord writes each encoded buffer whole, and sends nothing while the screen is idle).
 *
 * Its limits, handled: a recording ends at its time limit (180 s at most), so `restartLeadMs`
 * before it the next recording is started and the stream switches to it at its first key frame —
 * the old one's frames up to then, the new one's from its key frame on, so a viewer sees no gap; a
 * `start` event is emitted again only when the picture's size or codec changed. A recording that
 * ends before its limit (some devices stop screenrecord early) is followed by the next one at once. Nothing comes until
 * the screen changes: the first `start` waits for the first picture. The size asked for keeps the
 * display's aspect ratio (so no black borders) within `maxSize`.
 */
import type { Duplex } from 'node:stream';
import { shellCommand } from '../../adb/shell-quote.ts';
import { BridgeError } from '../../errors.ts';
import {
  type AccessUnit,
  AnnexBSplitter,
  findNal,
  NAL_SPS,
  splitParameterSets,
} from '../../protocol/screen/annexb.ts';
import { fitVideoSize, type Size } from '../../protocol/screen/size.ts';
import { codecString, parseSps } from '../../protocol/screen/sps.ts';
import { ereLiteral } from '../glass/agent-driver.ts';
import type { HelperDevice } from '../snapshot/device.ts';
import { ScreenEventQueue } from './event-queue.ts';
import type { ScreenEvent, ScreenSource, ScreenStreamInfo, ScreenStreamOptions } from './source.ts';

export const SCREENRECORD_MAX_TIME_LIMIT_S = 180;

export interface ScreenrecordOptions extends Required<ScreenStreamOptions> {
  /** Each recording's `--time-limit` in seconds (default and at most 180). */
  timeLimitS?: number;
  /** Start the next recording this long before the current one's limit (default 5 s). */
  restartLeadMs?: number;
  /** End an access unit after this long without output (default 20 ms). */
  quietMs?: number;
}

/** `wm size`'s display size (an override size wins over the physical one). */
export function parseWmSize(text: string): Size | null {
  const read = (label: string) => {
    const m = new RegExp(`${label} size: (\\d+)x(\\d+)`).exec(text);
    return m === null ? null : { width: Number(m[1]), height: Number(m[2]) };
  };
  return read('Override') ?? read('Physical');
}

interface Recording {
  id: number;
  stream: Duplex;
  splitter: AnnexBSplitter;
  quiet: NodeJS.Timeout | undefined;
  /** What came before any start code (screenrecord's error text), for the message. */
  text: string;
  units: number;
  ended: boolean;
  /** performance.now() when it was started. */
  started: number;
}

/** A recording that ends quietly sooner than this after its start failed (no restart). */
const EARLY_END_MIN_MS = 1000;

export class ScreenrecordSource implements ScreenSource {
  readonly #device: HelperDevice;
  readonly #o: ScreenrecordOptions & { timeLimitS: number; restartLeadMs: number; quietMs: number };
  readonly #queue = new ScreenEventQueue();
  readonly #started = performance.now();
  readonly #display: Size;
  readonly #video: Size;
  #current: Recording | null = null;
  #next: Recording | null = null;
  #info: ScreenStreamInfo | null = null;
  #restart: NodeJS.Timeout | undefined;
  #ids = 0;
  #closing: Promise<void> | null = null;
  /** How many times the stream moved to the next recording (for tests and logs). */
  switches = 0;

  private constructor(device: HelperDevice, options: ScreenrecordOptions, display: Size) {
    this.#device = device;
    const timeLimitS = Math.min(
      options.timeLimitS ?? SCREENRECORD_MAX_TIME_LIMIT_S,
      SCREENRECORD_MAX_TIME_LIMIT_S,
    );
    this.#o = {
      ...options,
      timeLimitS,
      restartLeadMs: Math.min(options.restartLeadMs ?? 5000, (timeLimitS * 1000) / 2),
      quietMs: options.quietMs ?? 20,
    };
    this.#display = display;
    this.#video = fitVideoSize(display, options.maxSize);
    this.#queue.onPressure = (paused) => {
      for (const r of [this.#current, this.#next]) {
        if (paused) r?.stream.pause();
        else r?.stream.resume();
      }
    };
  }

  static async start(device: HelperDevice, options: ScreenrecordOptions): Promise<ScreenrecordSource> {
    const wm = await device.shell(shellCommand('wm', 'size'), { timeoutMs: 10_000 });
    const display = parseWmSize(wm.stdout.toString('utf8'));
    if (display === null) {
      throw new BridgeError(
        'HELPER_FAILED',
        `could not read the display size of ${device.serial} (wm size answered ${JSON.stringify(wm.stdout.toString('utf8').slice(0, 120))})`,
      );
    }
    const source = new ScreenrecordSource(device, options, display);
    try {
      source.#current = await source.#record();
      source.#scheduleRestart();
      return source;
    } catch (err) {
      await source.close();
      throw err;
    }
  }

  events(): AsyncIterable<ScreenEvent> {
    return this.#queue.iterate();
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** The command line of one recording (also the pattern close() kills by). */
  #command(): string {
    const { width, height } = this.#video;
    return shellCommand(
      'screenrecord',
      '--output-format=h264',
      '--size',
      `${width}x${height}`,
      '--bit-rate',
      String(this.#o.bitRate),
      '--time-limit',
      String(this.#o.timeLimitS),
      '-',
    );
  }

  async #close(): Promise<void> {
    clearTimeout(this.#restart);
    this.#queue.end();
    for (const r of [this.#current, this.#next]) {
      if (r === null) continue;
      clearTimeout(r.quiet);
      r.stream.destroy();
    }
    // exec's end is a hang-up an idle screenrecord does not notice until it writes: kill it.
    const { width, height } = this.#video;
    await this.#device
      .shell(
        shellCommand(
          'pkill',
          '-f',
          ereLiteral(`screenrecord --output-format=h264 --size ${width}x${height}`),
        ),
        {
          timeoutMs: 5000,
        },
      )
      .catch(() => undefined);
  }

  #scheduleRestart(): void {
    const after = this.#o.timeLimitS * 1000 - this.#o.restartLeadMs;
    this.#restart = setTimeout(() => {
      if (this.#closing !== null) return;
      this.#record().then(
        (next) => {
          if (this.#closing !== null) {
            next.stream.destroy();
            return;
          }
          this.#next = next;
          this.#scheduleRestart();
        },
        (err: Error) => this.#fail(err),
      );
    }, after);
    this.#restart.unref?.();
  }

  async #record(): Promise<Recording> {
    const stream = await this.#device.execStream(this.#command(), { timeoutMs: 10_000 });
    const recording: Recording = {
      id: ++this.#ids,
      stream,
      splitter: new AnnexBSplitter(),
      quiet: undefined,
      text: '',
      units: 0,
      ended: false,
      started: performance.now(),
    };
    stream.on('data', (chunk: Buffer) => {
      if (recording.units === 0 && recording.text.length < 600) recording.text += chunk.toString('latin1');
      for (const unit of recording.splitter.push(chunk)) this.#onUnit(recording, unit);
      clearTimeout(recording.quiet);
      if (recording.splitter.buffered > 0) {
        recording.quiet = setTimeout(() => {
          const unit = recording.splitter.flush();
          if (unit !== null) this.#onUnit(recording, unit);
        }, this.#o.quietMs);
      }
    });
    stream.on('error', () => undefined);
    stream.on('close', () => {
      clearTimeout(recording.quiet);
      const unit = recording.splitter.flush();
      if (unit !== null) this.#onUnit(recording, unit);
      recording.ended = true;
      this.#onEnd(recording);
    });
    stream.resume();
    return recording;
  }

  #onEnd(recording: Recording): void {
    if (this.#closing !== null) return;
    if (recording === this.#next) {
      this.#next = null;
      return;
    }
    if (recording !== this.#current) return;
    if (this.#next !== null) {
      // The limit came before the next recording's first key frame (an idle screen): it takes over.
      this.#current = this.#next;
      this.#next = null;
      this.switches++;
      return;
    }
    // Ended before its limit with frames sent, or quietly after a while (an idle screen): some
    // devices stop screenrecord early. The next recording takes over at its first key frame.
    const lived = performance.now() - recording.started;
    if (recording.units > 0 || (recording.text.trim() === '' && lived >= EARLY_END_MIN_MS)) {
      clearTimeout(this.#restart);
      this.#record().then(
        (next) => {
          if (this.#closing !== null) {
            next.stream.destroy();
            return;
          }
          this.#current = next;
          this.switches++;
          this.#scheduleRestart();
        },
        (err: Error) => this.#fail(err),
      );
      return;
    }
    const text =
      recording.units === 0
        ? recording.text
            .replace(/[^\x20-\x7e\n]/g, '')
            .trim()
            .slice(0, 300)
        : '';
    this.#fail(
      new BridgeError(
        'HELPER_FAILED',
        `screenrecord on ${this.#device.serial} ended${text === '' ? '' : `: ${text}`}`,
      ),
    );
  }

  #fail(err: Error): void {
    this.#queue.end(err);
    void this.close();
  }

  #onUnit(recording: Recording, unit: AccessUnit): void {
    if (this.#closing !== null) return;
    recording.units++;
    if (recording === this.#next) {
      if (!unit.key) return;
      // The next recording's first key frame: switch, and stop the old one.
      const old = this.#current;
      this.#current = recording;
      this.#next = null;
      this.switches++;
      if (old !== null) {
        clearTimeout(old.quiet);
        old.stream.destroy();
      }
    } else if (recording !== this.#current) {
      return;
    }
    const pts = Math.round((performance.now() - this.#started) * 1000);
    const { config, picture } = splitParameterSets(unit.data);
    if (config !== null) {
      const sps = findNal(config, NAL_SPS);
      if (sps !== null) this.#announce(sps);
    }
    // Nothing decodes before the first parameter sets.
    if (this.#info === null) return;
    if (config !== null)
      this.#queue.push({ type: 'packet', packet: { pts, config: true, key: false, data: config } });
    if (picture !== null) {
      this.#queue.push({ type: 'packet', packet: { pts, config: false, key: unit.key, data: picture } });
    }
  }

  /** A `start` for the first SPS, and for one that changes the picture's size or codec. */
  #announce(sps: Uint8Array): void {
    let parsed: { width: number; height: number };
    let codec: string;
    try {
      parsed = parseSps(sps);
      codec = codecString(sps);
    } catch (err) {
      this.#fail(err as Error);
      return;
    }
    const info: ScreenStreamInfo = {
      codec: 'h264',
      width: parsed.width,
      height: parsed.height,
      displayWidth: this.#display.width,
      displayHeight: this.#display.height,
      source: 'screenrecord',
      codecString: codec,
    };
    const old = this.#info;
    if (old !== null && old.width === info.width && old.height === info.height && old.codecString === codec)
      return;
    this.#info = info;
    this.#queue.push({ type: 'start', info });
  }
}
