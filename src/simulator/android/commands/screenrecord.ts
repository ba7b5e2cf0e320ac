/**
 * `screenrecord --output-format=h264 [--size WxH] [--bit-rate N] [--time-limit S] -`: the emulated
 * screen (../screen/live.ts) as a raw Annex B H.264 stream on stdout (what `adb exec-out` reads),
 * with AOSP screenrecord's limits (frameworks/av/cmds/screenrecord):
 *
 * - the time limit is 180 s by default and at most 180 s (`Time limit Ns outside acceptable range
 *   [1,180]`); the `screenrecord-limit-s=N` fault cuts every recording at N s (a test crosses the
 *   limit without waiting three minutes). At the limit it stops and exits 0.
 * - no frame until the screen changes, and none while it is idle (the virtual display only composes
 *   on changes);
 * - `--size` of another aspect ratio than the display keeps the display's ratio with black borders;
 *   the default size is the display's;
 * - the bit rate is 100,000 to 200,000,000 bps (default 20 Mbps; `4M`, `500K` accepted).
 *
 * Only the raw `h264` format to stdout (`-`) is emulated. A host that stops reading holds the
 * encoder (frames are skipped while the output backlog is over 4 MiB), as a blocked write would.
 */
import type { CommandFn } from '../context.ts';
import { startLiveScreen } from '../screen/live.ts';

const MAX_TIME_LIMIT_S = 180;
const MIN_BIT_RATE = 100_000;
const MAX_BIT_RATE = 200_000_000;
const DEFAULT_BIT_RATE = 20_000_000;
const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;
/** Frames per second the emulated display composes at most. */
const DISPLAY_FPS = 30;

const USAGE = `Usage: screenrecord [options] <filename>

Android screenrecord v1.3.  Records the device's display to a .mp4 file.

Options:
--size WIDTHxHEIGHT
    Set the video size, e.g. "1280x720".  Default is the device's main
    display resolution (if supported), 1280x720 if not.  For best results,
    use a size supported by the AVC encoder.
--bit-rate RATE
    Set the video bit rate, in bits per second.  Value may be specified as
    bits or megabits, e.g. '4000000' is equivalent to '4M'.  Default 20Mbps.
--output-format FORMAT
    Format can be one of "mp4", "h264", "webm", "3gpp", "frames", "raw-frames".
--time-limit TIME
    Set the maximum recording time, in seconds.  Default / maximum is 180.
--verbose
    Display interesting information on stdout.
--help
    Show this message.

Recording continues until Ctrl-C is hit or the time limit is reached.
`;

/** `4M`, `500K`, `4000000` → bits per second; NaN when not a number. */
function parseRate(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text);
  if (match === null) return Number.NaN;
  const unit = (match[2] ?? '').toLowerCase();
  return Math.round(Number(match[1]) * (unit === 'm' ? 1_000_000 : unit === 'k' ? 1000 : 1));
}

export const screenrecord: CommandFn = async (argv, ctx) => {
  const { io } = ctx;
  const device = ctx.android.device;
  let size: { width: number; height: number } | undefined;
  let bitRate = DEFAULT_BIT_RATE;
  let timeLimitS = MAX_TIME_LIMIT_S;
  let format = 'mp4';
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const takesValue = ['--size', '--bit-rate', '--time-limit', '--output-format', '--display-id'].includes(
      name,
    );
    const value = takesValue ? (eq < 0 ? argv[++i] : arg.slice(eq + 1)) : undefined;
    if (takesValue && value === undefined) {
      io.stderr(`screenrecord: option '${name}' requires an argument\n${USAGE}`);
      return 2;
    }
    switch (name) {
      case '--help':
        io.stdout(USAGE);
        return 0;
      case '--verbose':
      case '--rotate':
      case '--bugreport':
      case '--display-id':
        break;
      case '--size': {
        const m = /^(\d+)x(\d+)$/.exec(value as string);
        if (m === null) {
          io.stderr(`Invalid size '${value}', must be width x height\n`);
          return 2;
        }
        const width = Number(m[1]);
        const height = Number(m[2]);
        if (width === 0 || height === 0) {
          io.stderr(`Invalid size ${width}x${height}\n`);
          return 2;
        }
        size = { width, height };
        break;
      }
      case '--bit-rate': {
        bitRate = parseRate(value as string);
        if (!(bitRate >= MIN_BIT_RATE && bitRate <= MAX_BIT_RATE)) {
          io.stderr(`Bit rate ${value}bps outside acceptable range [${MIN_BIT_RATE},${MAX_BIT_RATE}]\n`);
          return 2;
        }
        break;
      }
      case '--time-limit': {
        timeLimitS = /^\d+$/.test(value as string) ? Number(value) : Number.NaN;
        if (!(timeLimitS >= 1 && timeLimitS <= MAX_TIME_LIMIT_S)) {
          io.stderr(`Time limit ${value}s outside acceptable range [1,${MAX_TIME_LIMIT_S}]\n`);
          return 2;
        }
        break;
      }
      case '--output-format':
        format = value as string;
        if (!['mp4', 'h264', 'webm', '3gpp', 'frames', 'raw-frames'].includes(format)) {
          io.stderr(`Unknown format '${format}'\n`);
          return 2;
        }
        break;
      default:
        if (arg.startsWith('--')) {
          io.stderr(`screenrecord: unrecognized option '${arg}'\n${USAGE}`);
          return 2;
        }
        files.push(arg);
    }
  }
  if (files.length !== 1) {
    io.stderr('Must specify output file (see --help).\n');
    return 2;
  }
  if (format !== 'h264' || files[0] !== '-') {
    io.stderr('screenrecord: the simulator records only --output-format=h264 to stdout (-)\n');
    return 1;
  }
  const display = device.displaySize();
  const video = size ?? display;
  if (video.width % 2 !== 0 || video.height % 2 !== 0) {
    io.stderr('ERROR: unable to configure video encoder (err=-38)\n');
    return 1;
  }
  const faultLimit = device.faults.screenrecordLimitS;
  const limitMs = Math.min(timeLimitS, faultLimit ?? MAX_TIME_LIMIT_S) * 1000;

  let finish: (status: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const live = startLiveScreen(device, {
    video,
    fit: 'letterbox',
    maxFps: DISPLAY_FPS,
    bitRate,
    repeat: false,
    paused: () => (io.backlog?.() ?? 0) > MAX_BACKLOG_BYTES,
    onUnit: (unit) => io.stdout(unit),
    onFailure: (error) => {
      io.stderr(`ERROR: the encoder failed: ${error.message}\n`);
      finish(1);
    },
  });
  const proc = ctx.startProcess(['screenrecord', ...argv].join(' '), () => finish(143));
  const limit = setTimeout(() => finish(0), limitMs);
  const hangUp = (): void => finish(129);
  if (io.signal.aborted) hangUp();
  else io.signal.addEventListener('abort', hangUp, { once: true });
  const status = await finished;
  clearTimeout(limit);
  io.signal.removeEventListener('abort', hangUp);
  await live.stop();
  proc.exited();
  return status;
};
