/**
 * The glass agent's encoder mode as the simulator runs it: `CLASSPATH=<jar> app_process /
 * dev.devicebridge.glassagent.ScreenMain --socket NAME [--max-size N] [--bit-rate BPS] [--max-fps F]`
 * listens on `localabstract:NAME`, says so on stdout, and serves one client the framing of
 * docs/live-screen.md: the session header, then for every access unit of the emulated screen
 * (../screen/live.ts: a picture at once, the last frame repeated while idle, at most F a second)
 * a CONFIG packet with the SPS and PPS before each key frame, and the frame. Presentation times are
 * microseconds since the client connected. The process ends when its client goes (or when killed,
 * or on a hang-up of its shell unless `survive-hangup`); one ffmpeg runs per client, killed with it.
 *
 * With the `screen-encoder-fail` fault it cannot encode: it prints MediaCodec's exception and exits 1
 * before listening (the bridge then falls back to screenrecord). With `screen-encoder-die-after-s=N`
 * it crashes N seconds after its client connected: a fatal signal on stderr, the client's stream cut,
 * exit status 139 (as a native crash in the encoder).
 */
import type { Duplex } from 'node:stream';
import { NAL_IDR, nalUnits, splitParameterSets } from '../../../protocol/screen/annexb.ts';
import { encodeScreenPacket, encodeSessionHeader } from '../../../protocol/screen/framing.ts';
import { fitVideoSize } from '../../../protocol/screen/size.ts';
import { type CommandContext, stopOnHangUp } from '../context.ts';
import { type LiveScreen, startLiveScreen } from '../screen/live.ts';

export const SCREEN_MAIN_CLASS = 'dev.devicebridge.glassagent.ScreenMain';
const MAX_SOCKET_BACKLOG = 4 * 1024 * 1024;
const USAGE = 'usage: ScreenMain --socket NAME [--max-size N] [--bit-rate BPS] [--max-fps F]\n';

interface ScreenArgs {
  socket: string;
  maxSize: number;
  bitRate: number;
  maxFps: number;
}

function parseArgs(argv: string[]): ScreenArgs | string {
  const out = { socket: '', maxSize: 1280, bitRate: 4_000_000, maxFps: 30 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i] as string;
    const value = argv[i + 1];
    if (value === undefined) return `${name} needs a value`;
    if (name === '--socket') {
      if (!/^[A-Za-z0-9_.-]{1,100}$/.test(value)) return `bad socket name ${JSON.stringify(value)}`;
      out.socket = value;
      continue;
    }
    const n = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
    if (name === '--max-size' && n >= 0) out.maxSize = n;
    else if (name === '--bit-rate' && n >= 1) out.bitRate = n;
    else if (name === '--max-fps' && n >= 1 && n <= 240) out.maxFps = n;
    else return `bad option ${name} ${JSON.stringify(value)}`;
  }
  return out.socket === '' ? '--socket is required' : out;
}

/** Serve the framing to one client on `socket` until it goes or `stop` is called. */
function serve(ctx: CommandContext, args: ScreenArgs, socket: Duplex): LiveScreen {
  const device = ctx.android.device;
  const display = device.displaySize();
  const video = fitVideoSize(display, args.maxSize);
  const started = performance.now();
  const pts = () => Math.round((performance.now() - started) * 1000);
  socket.on('error', () => undefined);
  socket.write(
    encodeSessionHeader({
      videoWidth: video.width,
      videoHeight: video.height,
      displayWidth: display.width,
      displayHeight: display.height,
    }),
  );
  return startLiveScreen(device, {
    video,
    fit: 'stretch',
    maxFps: args.maxFps,
    bitRate: args.bitRate,
    repeat: true,
    paused: () => socket.writableLength > MAX_SOCKET_BACKLOG,
    onUnit: (unit) => {
      if (socket.destroyed) return;
      const at = pts();
      const { config, picture } = splitParameterSets(unit);
      if (config !== null) socket.write(encodeScreenPacket({ config: true }, at, config));
      if (picture !== null) {
        const key = nalUnits(picture).some((n) => n.type === NAL_IDR);
        socket.write(encodeScreenPacket({ key }, at, picture));
      }
    },
    onFailure: (error) => {
      ctx.io.stderr(`screen encoder failed: ${error.message}\n`);
      socket.destroy();
    },
  });
}

export async function screenMain(argv: string[], ctx: CommandContext, cmdline: string): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    ctx.io.stderr(`${args}\n${USAGE}`);
    return 2;
  }
  const device = ctx.android.device;
  if (device.faults.screenEncoderFail === true) {
    ctx.io.stderr(
      'Exception in thread "main" android.media.MediaCodec$CodecException: Error 0xfffffff4\n\tat android.media.MediaCodec.native_configure(Native Method)\n',
    );
    return 1;
  }
  let status = 0;
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let client: { socket: Duplex; live: LiveScreen } | null = null;
  let crash: NodeJS.Timeout | undefined;
  let listener: { close(): void };
  try {
    listener = device.listen({ abstract: args.socket }, (socket) => {
      if (client !== null) {
        // One client at a time, as the real agent serves one.
        socket.destroy();
        return;
      }
      client = { socket, live: serve(ctx, args, socket) };
      const dieAfterS = device.faults.screenEncoderDieAfterS;
      if (dieAfterS !== undefined) {
        crash = setTimeout(() => {
          ctx.io.stderr('Fatal signal 11 (SIGSEGV), code 1 (SEGV_MAPERR) in tid (MediaCodec_loop)\n');
          status = 139;
          stop();
        }, dieAfterS * 1000);
      }
      // The client going away ends the stream (adb streams have no half-close).
      socket.once('end', stop);
      socket.once('close', stop);
      socket.resume();
    });
  } catch (err) {
    ctx.io.stderr(`Exception in thread "main" java.io.IOException: ${(err as Error).message}\n`);
    return 1;
  }
  ctx.io.stdout(`screen listening on localabstract:${args.socket}\n`);
  const proc = ctx.startProcess(cmdline, () => {
    status = 143;
    listener.close();
    stop();
  });
  stopOnHangUp(ctx, stop);
  await stopped;
  clearTimeout(crash);
  listener.close();
  const served = client as { socket: Duplex; live: LiveScreen } | null;
  if (served !== null) {
    served.socket.destroy();
    await served.live.stop();
  }
  proc.exited();
  return status;
}
