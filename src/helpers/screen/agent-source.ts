/**
 * The live screen from the glass agent's encoder mode (docs/live-screen.md): the agent's jar on the
 * device (pushed and verified as the line-protocol agent's, `ensureAgentJar`), `CLASSPATH=<jar>
 * app_process / dev.devicebridge.glassagent.ScreenMain --socket NAME …` on a held shell (a socket
 * name of its own per stream), a forward `localabstract:NAME` owned by the lease in the forward
 * ledger, and the framing read from it: the session header, then packets. A `start` event goes out
 * at the first CONFIG packet (its SPS gives the codec string) and again at the CONFIG after a SIZE
 * packet.
 *
 * It cannot encode when its process exits before the session header came, or no header came within
 * `headerTimeoutMs`: `startAgentScreen` then rejects with an `AgentCannotEncode` (the caller falls
 * back to screenrecord) after stopping what it started.
 *
 * Every stream's socket name starts with `devicebridge-screen-`: before it starts its encoder, a
 * stream stops every encoder of ours still running on the device (`pkill -f` the main class and
 * that socket prefix, literally), which an earlier stream left when its bridge crashed or lost the
 * device's connection (an app_process outlives its shell's hang-up); encoders that other tools
 * started with other socket names are left alone. `close()` stops its own by its full socket name.
 */
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { ShellStream } from '../../adb/client.ts';
import type { ForwardEntry } from '../../adb/forward-ledger.ts';
import { quoteShellArg, shellCommand } from '../../adb/shell-quote.ts';
import { BridgeError } from '../../errors.ts';
import type { AppProcessJarManifest } from '../../manifest/index.ts';
import { findNal, NAL_SPS } from '../../protocol/screen/annexb.ts';
import { type ScreenFrame, ScreenFrameDecoder, type ScreenSize } from '../../protocol/screen/framing.ts';
import { codecString } from '../../protocol/screen/sps.ts';
import { ensureAgentJar, ereLiteral } from '../glass/agent-driver.ts';
import { connectForward } from '../glass/line-client.ts';
import type { HelperDevice } from '../snapshot/device.ts';
import { ScreenEventQueue } from './event-queue.ts';
import type { ScreenEvent, ScreenPacket, ScreenSource, ScreenStreamOptions } from './source.ts';

export const SCREEN_MAIN_CLASS = 'dev.devicebridge.glassagent.ScreenMain';
/** The start of every socket name the bridge gives an encoder (the mark of ours in the process list). */
export const SCREEN_SOCKET_PREFIX = 'devicebridge-screen-';

/** The `pkill -f` pattern of our encoder on `socketName`, or of all of ours given the prefix. */
function encoderPattern(socketName: string): string {
  return ereLiteral(`${SCREEN_MAIN_CLASS} --socket ${socketName}`);
}

/**
 * Stop every encoder of ours on the device (an earlier stream's, left running). Resolves whether
 * one was stopped (pkill's exit 0; 1 means none ran, and a device without pkill answers other codes).
 */
export async function stopScreenEncoders(
  device: Pick<HelperDevice, 'shell'>,
  timeoutMs = 5000,
): Promise<boolean> {
  const result = await device.shell(shellCommand('pkill', '-f', encoderPattern(SCREEN_SOCKET_PREFIX)), {
    timeoutMs,
  });
  return result.exitCode === 0;
}

/** The agent could not serve a stream (its process exited, or no session header came in time). */
/**
 * A packet of the device's stream as the source hands it on, or null for one that carries nothing (an
 * empty payload: viewers refuse an empty access unit). A presentation time past 2^53 - 1 µs (the
 * framing allows 61 bits) reads as 2^53 - 1, as viewers read one.
 */
export function sourcePacket(frame: Extract<ScreenFrame, { type: 'packet' }>): ScreenPacket | null {
  if (frame.data.length === 0) return null;
  return {
    pts: Math.min(frame.pts, Number.MAX_SAFE_INTEGER),
    config: frame.config,
    key: frame.key,
    data: frame.data,
  };
}

export class AgentCannotEncode extends BridgeError {
  constructor(message: string) {
    super('COMPANION_UNSUPPORTED', message, { retryable: false });
    this.name = 'AgentCannotEncode';
  }
}

export interface AgentScreenOptions extends Required<ScreenStreamOptions> {
  /** The lease that owns the forward. */
  owner: string;
  manifest: AppProcessJarManifest;
  /** The jar on this host, verified against `manifest.sha256`. */
  jarPath: string;
  /** How long the session header may take after the start (default 8 s). */
  headerTimeoutMs?: number;
}

const STDERR_KEEP = 2048;

export class AgentScreenSource implements ScreenSource {
  readonly #device: HelperDevice;
  readonly #socketName: string;
  readonly #queue = new ScreenEventQueue();
  #shell: ShellStream | null = null;
  #forward: ForwardEntry | null = null;
  #socket: Duplex | null = null;
  #closing: Promise<void> | null = null;
  /** Whether an encoder an earlier stream left running was stopped before this one started. */
  stoppedStale = false;

  private constructor(device: HelperDevice, socketName: string) {
    this.#device = device;
    this.#socketName = socketName;
  }

  /** Start the encoder and read its session header; AgentCannotEncode when it cannot. */
  static async start(device: HelperDevice, options: AgentScreenOptions): Promise<AgentScreenSource> {
    const source = new AgentScreenSource(device, `${SCREEN_SOCKET_PREFIX}${randomBytes(4).toString('hex')}`);
    try {
      await source.#start(options);
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

  async #close(): Promise<void> {
    this.#queue.end();
    this.#socket?.destroy();
    this.#shell?.close();
    const forward = this.#forward;
    this.#forward = null;
    await Promise.allSettled([
      forward === null ? Promise.resolve() : this.#device.closeForward(forward),
      // Closing the shell is a hang-up a device's process may outlive: kill it by its socket name.
      this.#shell === null
        ? Promise.resolve()
        : this.#device.shell(shellCommand('pkill', '-f', encoderPattern(this.#socketName)), {
            timeoutMs: 5000,
          }),
    ]);
  }

  async #start(options: AgentScreenOptions): Promise<void> {
    const device = this.#device;
    const { manifest } = options;
    await ensureAgentJar(device, manifest, options.jarPath);
    this.stoppedStale = await stopScreenEncoders(device);
    const command = `CLASSPATH=${quoteShellArg(manifest.devicePath)} ${shellCommand(
      'app_process',
      '/',
      SCREEN_MAIN_CLASS,
      '--socket',
      this.#socketName,
      '--max-size',
      String(options.maxSize),
      '--bit-rate',
      String(options.bitRate),
      '--max-fps',
      String(options.maxFps),
    )}`;
    const shell = await device.shellStream(command, { timeoutMs: 10_000 });
    this.#shell = shell;
    let stderr = '';
    shell.stderr.on('data', (d: Buffer) => {
      if (stderr.length < STDERR_KEEP) stderr += d.toString('utf8');
    });
    shell.stdout.resume();
    let exited = false;
    const exit = shell.exit.then((code) => {
      exited = true;
      return code;
    });
    this.#forward = await device.openForward(options.owner, `localabstract:${this.#socketName}`, {
      timeoutMs: 10_000,
    });
    const deadline = performance.now() + (options.headerTimeoutMs ?? 8000);
    const cannot = (why: string) =>
      new AgentCannotEncode(`the glass agent cannot encode the screen of ${device.serial}: ${why}`);
    // A forward accepts a connection with nothing listening yet and closes it: try until the header.
    for (;;) {
      if (this.#closing !== null) throw new BridgeError('UNAVAILABLE', 'the screen source was closed');
      if (exited) {
        const code = await exit;
        throw cannot(
          `its process exited (${code ?? 'no status'}): ${stderr.trim().slice(0, 300) || 'no message'}`,
        );
      }
      const remaining = deadline - performance.now();
      if (remaining <= 0) throw cannot(`no session header within ${options.headerTimeoutMs ?? 8000} ms`);
      const first = await this.#tryConnect(Math.min(remaining, 2000));
      if (first !== null) {
        this.#read(first.socket, first.decoder, first.frames);
        void exit.then((code) => {
          if (!this.#queue.ended && this.#closing === null) {
            this.#queue.end(
              new BridgeError(
                'HELPER_FAILED',
                `the glass agent's screen encoder on ${device.serial} exited (${code ?? 'no status'}): ${stderr.trim().slice(0, 300)}`,
              ),
            );
          }
        });
        return;
      }
      await Promise.race([new Promise((r) => setTimeout(r, 100)), exit]);
    }
  }

  /** One connection: resolves with it once the session header came, null when it closed or stayed silent. */
  async #tryConnect(
    waitMs: number,
  ): Promise<{ socket: Duplex; decoder: ScreenFrameDecoder; frames: ScreenFrame[] } | null> {
    const forward = this.#forward as ForwardEntry;
    let socket: Duplex;
    try {
      socket = await connectForward(this.#device.forwardTarget(forward));
    } catch {
      return null;
    }
    const decoder = new ScreenFrameDecoder();
    return new Promise((resolve, reject) => {
      const frames: ScreenFrame[] = [];
      let settled = false;
      const settle = (
        value: { socket: Duplex; decoder: ScreenFrameDecoder; frames: ScreenFrame[] } | null,
      ) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.off('data', onData);
        socket.off('close', onClose);
        if (value === null) socket.destroy();
        resolve(value);
      };
      const onData = (chunk: Buffer) => {
        try {
          frames.push(...decoder.push(chunk));
        } catch (err) {
          settled = true;
          clearTimeout(timer);
          socket.destroy();
          reject(err);
          return;
        }
        if (decoder.started) {
          socket.pause();
          settle({ socket, decoder, frames });
        }
      };
      const onClose = () => settle(null);
      const timer = setTimeout(() => settle(null), waitMs);
      socket.on('data', onData);
      socket.on('close', onClose);
      socket.on('error', () => undefined);
    });
  }

  #read(socket: Duplex, decoder: ScreenFrameDecoder, first: ScreenFrame[]): void {
    this.#socket = socket;
    let size: ScreenSize | null = null;
    let announce = true;
    let codec: string | null = null;
    const onFrame = (frame: ScreenFrame): void => {
      if (frame.type === 'session') {
        size = frame.header;
        return;
      }
      if (frame.type === 'size') {
        size = frame.size;
        announce = true;
        return;
      }
      if (frame.config) {
        const sps = findNal(frame.data, NAL_SPS);
        if (sps !== null) {
          const next = codecString(sps);
          if (next !== codec) announce = true;
          codec = next;
        }
      }
      if (announce && codec !== null && size !== null) {
        announce = false;
        const s = size as ScreenSize;
        this.#queue.push({
          type: 'start',
          info: {
            codec: 'h264',
            width: s.videoWidth,
            height: s.videoHeight,
            displayWidth: s.displayWidth,
            displayHeight: s.displayHeight,
            source: 'agent',
            codecString: codec,
          },
        });
      }
      // Nothing decodes before the first config: drop what comes before it.
      if (codec === null) return;
      const packet = sourcePacket(frame);
      if (packet !== null) this.#queue.push({ type: 'packet', packet });
    };
    for (const frame of first) onFrame(frame);
    this.#queue.onPressure = (paused) => (paused ? socket.pause() : socket.resume());
    socket.on('data', (chunk: Buffer) => {
      let frames: ScreenFrame[];
      try {
        frames = decoder.push(chunk);
      } catch (err) {
        socket.destroy();
        this.#queue.end(err as Error);
        return;
      }
      for (const frame of frames) onFrame(frame);
    });
    socket.on('close', () => {
      if (this.#closing === null) {
        this.#queue.end(
          new BridgeError('HELPER_FAILED', `the glass agent's screen stream on ${this.#device.serial} ended`),
        );
      }
    });
    socket.resume();
  }
}
