/**
 * The glass agent's encoder, kept going: when its stream ends while the source is open (the encoder
 * process was killed or crashed, its connection dropped), the encoder is started again — at most
 * `restarts` times within `restartWindowMs` — and when it cannot be started again, or keeps ending,
 * `screenrecord` takes over. The reader sees one stream: a gap, then the next encoder's config and
 * key frame. A `start` event is passed on only when the picture's size, its display or its codec
 * changed (not for a new encoder of the same picture, nor for the move to screenrecord alone), and
 * presentation times never go back (each new encoder's are shifted to follow the last one's by the
 * time that passed). Only a device that went away (DEVICE_OFFLINE, UNAUTHORIZED_DEVICE) or a
 * screenrecord that failed in turn ends the stream with an error.
 */
import { BridgeError, isBridgeError } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import { ScreenEventQueue } from './event-queue.ts';
import type { ScreenEvent, ScreenSource, ScreenStreamInfo } from './source.ts';

export interface RecoveringScreenOptions {
  /** Starts the glass agent's encoder again (rejects when it cannot encode). */
  startAgent(): Promise<ScreenSource>;
  /** Starts `screenrecord` in its place. */
  startScreenrecord(): Promise<ScreenSource>;
  /** The device, for messages. */
  serial: string;
  /** How many times the encoder is started again within `restartWindowMs` (default 2). */
  restarts?: number;
  /** Default 60 s. */
  restartWindowMs?: number;
  logger?: Logger;
}

const sameShape = (a: ScreenStreamInfo, b: ScreenStreamInfo): boolean =>
  a.width === b.width &&
  a.height === b.height &&
  a.displayWidth === b.displayWidth &&
  a.displayHeight === b.displayHeight &&
  a.codec === b.codec &&
  a.codecString === b.codecString;

const deviceGone = (err: unknown): boolean =>
  isBridgeError(err) && (err.code === 'DEVICE_OFFLINE' || err.code === 'UNAUTHORIZED_DEVICE');

export class RecoveringScreenSource implements ScreenSource {
  readonly #o: Required<Omit<RecoveringScreenOptions, 'logger'>> & { logger: Logger | undefined };
  readonly #queue = new ScreenEventQueue();
  #current: ScreenSource;
  #kind: 'agent' | 'screenrecord' = 'agent';
  /** performance.now() of each restart within the window. */
  #restartTimes: number[] = [];
  #info: ScreenStreamInfo | null = null;
  /** Added to the current source's presentation times. */
  #offset = 0;
  #lastPts = -1;
  /** performance.now() of the last packet. */
  #lastAt = 0;
  /** The next packet is the first of a new source: its times are shifted to follow. */
  #rebase = false;
  /** Resolves when the reader has caught up (the queue's pressure eased); null when not pressed. */
  #gate: { promise: Promise<void>; open(): void } | null = null;
  #closing: Promise<void> | null = null;
  readonly #running: Promise<void>;
  /** How many times the encoder was started again (for tests and logs). */
  restarts = 0;

  constructor(first: ScreenSource, options: RecoveringScreenOptions) {
    this.#current = first;
    this.#o = {
      ...options,
      restarts: options.restarts ?? 2,
      restartWindowMs: options.restartWindowMs ?? 60_000,
      logger: options.logger,
    };
    this.#queue.onPressure = (paused) => {
      if (paused && this.#gate === null) {
        let open!: () => void;
        const promise = new Promise<void>((resolve) => {
          open = resolve;
        });
        this.#gate = { promise, open };
      } else if (!paused) this.#openGate();
    };
    this.#running = this.#run();
  }

  /** Where the picture comes from now. */
  get kind(): 'agent' | 'screenrecord' {
    return this.#kind;
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
    this.#openGate();
    await this.#current.close().catch(() => undefined);
    // A replacement being started is closed by the loop once it is there.
    await this.#running;
  }

  #openGate(): void {
    const gate = this.#gate;
    this.#gate = null;
    gate?.open();
  }

  async #run(): Promise<void> {
    for (;;) {
      let failure: unknown = null;
      try {
        for await (const event of this.#current.events()) {
          if (this.#closing !== null) break;
          this.#pass(event);
          if (this.#gate !== null) await this.#gate.promise;
        }
      } catch (err) {
        failure = err;
      }
      if (this.#closing !== null) return;
      await this.#current.close().catch(() => undefined);
      let next: ScreenSource;
      try {
        next = await this.#replace(failure);
      } catch (err) {
        this.#queue.end(err as Error);
        void this.close();
        return;
      }
      if (this.#closing !== null) {
        await next.close().catch(() => undefined);
        return;
      }
      this.#current = next;
      this.#rebase = true;
    }
  }

  /** The source after `failure` ended the current one; rejects when the stream cannot go on. */
  async #replace(failure: unknown): Promise<ScreenSource> {
    const why = failure instanceof Error ? failure.message : 'its stream ended';
    const serial = this.#o.serial;
    if (this.#kind === 'screenrecord') {
      throw failure instanceof Error
        ? failure
        : new BridgeError('HELPER_FAILED', `screenrecord's stream on ${serial} ended`);
    }
    const now = performance.now();
    this.#restartTimes = this.#restartTimes.filter((t) => now - t < this.#o.restartWindowMs);
    if (this.#restartTimes.length < this.#o.restarts) {
      this.#restartTimes.push(now);
      this.restarts++;
      this.#o.logger?.warn(
        { serial, err: why, restart: this.restarts },
        "live screen: the glass agent's encoder ended; starting it again",
      );
      try {
        return await this.#o.startAgent();
      } catch (err) {
        if (deviceGone(err)) throw err;
        this.#o.logger?.warn(
          { serial, err: (err as Error).message },
          "live screen: the glass agent's encoder cannot be started again; falling back to screenrecord",
        );
      }
    } else {
      this.#o.logger?.warn(
        { serial, err: why, restarts: this.#restartTimes.length },
        "live screen: the glass agent's encoder keeps ending; falling back to screenrecord",
      );
    }
    this.#kind = 'screenrecord';
    return this.#o.startScreenrecord();
  }

  #pass(event: ScreenEvent): void {
    if (event.type === 'start') {
      const old = this.#info;
      this.#info = event.info;
      if (old === null || !sameShape(old, event.info)) this.#queue.push(event);
      return;
    }
    const packet = event.packet;
    const at = performance.now();
    if (this.#rebase) {
      this.#rebase = false;
      this.#offset =
        this.#lastPts < 0
          ? 0
          : this.#lastPts + Math.max(1, Math.round((at - this.#lastAt) * 1000)) - packet.pts;
    }
    const pts = Math.max(this.#lastPts, packet.pts + this.#offset);
    this.#lastPts = pts;
    this.#lastAt = at;
    this.#queue.push(pts === packet.pts ? event : { type: 'packet', packet: { ...packet, pts } });
  }
}
