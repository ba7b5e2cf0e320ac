/**
 * The lease's live screen (docs/live-screen.md): one device stream per lease on the node that drives
 * the device, shared by every viewer. The first viewer starts it (`openScreenSource`, the lease-session
 * option), the last one leaving stops it after a short linger, and the lease's teardown always stops
 * it (a resource of the lease's session) and ends every viewer with `lease-ended`.
 *
 * Fan-out: each packet is encoded once and handed to every viewer's queue. A queue holds at most
 * `queueBytes` (the message being written included); a viewer over its bound loses every frame it
 * holds and every later one until the next key frame, which it gets after a `skipped` message. A
 * viewer never waits for another: the source is read at its own pace. Every key frame sent carries
 * the stream's current SPS/PPS before it, so a viewer can start decoding at any key frame; a new
 * viewer gets the frames since the last key frame at once (when they fit its queue).
 *
 * Input: pointer down/move/up in the picture's pixels, mapped to the display and streamed to the
 * glass agent as they come (its `touch` op; one finger per lease), or, with an agent that has no
 * such op, sent as one pointer gesture when the pointer goes up; keys and text go to the glass agent
 * as they come. One viewer's inputs run in order (screen-input.ts).
 */

import { BridgeError, isBridgeError } from '../errors.ts';
import { artifactSource } from '../helpers/apk-source.ts';
import { companionRelease, GLASS_AGENT } from '../helpers/glass/companions.ts';
import { openScreenSource } from '../helpers/screen/open.ts';
import type {
  ScreenEvent,
  ScreenSource,
  ScreenStreamInfo,
  ScreenStreamOptions,
} from '../helpers/screen/source.ts';
import { findNal, NAL_SPS } from '../protocol/screen/annexb.ts';
import { codecString } from '../protocol/screen/sps.ts';
import {
  PACKET_HEADER_BYTES,
  type ScreenEndReason,
  type ScreenStartMessage,
  writePacketMessageHeader,
} from '../protocol/screen/viewer-messages.ts';
import type { GlassCapability } from './glass.ts';
import type { LeaseTarget } from './scope.ts';
import { TouchChannel, ViewerInput } from './screen-input.ts';
import { type OpenScreenSource, SCREEN_LIMITS, type ScreenLimits } from './screen-options.ts';
import { type LeaseSessions, leaseEnded } from './session.ts';

export { MAX_GESTURE_POINTS } from './screen-input.ts';
export { type OpenScreenSource, SCREEN_LIMITS, type ScreenLimits } from './screen-options.ts';

/** Where one viewer's messages go (a WebSocket, or a test's sink). */
export interface ScreenViewerSink {
  /** Send one message; `done` once it was written (or failed: the viewer is gone). */
  send(message: string | Uint8Array, done: (err?: Error | null) => void): void;
  /** Close the connection (after the `end` message was sent). */
  close(): void;
}

/** What a viewer sends. */
export type ScreenInput =
  | { type: 'pointer'; action: 'down' | 'move' | 'up' | 'cancel'; x: number; y: number }
  | { type: 'key'; key: string }
  | { type: 'text'; text: string };

/** How one viewer's queue did (tests and metrics). */
export interface ViewerStats {
  framesSent: number;
  framesSkipped: number;
  /** Bytes held now (the message being written included). */
  queuedBytes: number;
}

type Entry = {
  data: string | Uint8Array;
  bytes: number;
  kind: 'frame' | 'skipped' | 'control';
  skipped?: number;
};

const byteLength = (data: string | Uint8Array) =>
  typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.byteLength;

/**
 * One viewer's bounded queue in front of its sink: one message in flight at a time, frames dropped
 * (until the next key frame) when the bound is passed, control messages never dropped.
 */
export class ViewerQueue {
  readonly #bound: number;
  readonly #queue: Entry[] = [];
  #sink: ScreenViewerSink | null = null;
  #queued = 0;
  #inFlight = false;
  #inFlightBytes = 0;
  /** Frames dropped since the viewer fell behind; -1 when it is not behind. */
  #dropped = -1;
  /** A viewer that joined between key frames: frames are not sent until the next key frame. */
  #awaitingKey = false;
  #closed = false;
  #onGone: (() => void) | undefined;
  framesSent = 0;
  framesSkipped = 0;

  constructor(bound: number, onGone?: () => void) {
    this.#bound = bound;
    this.#onGone = onGone;
  }

  get closed(): boolean {
    return this.#closed;
  }

  stats(): ViewerStats {
    return { framesSent: this.framesSent, framesSkipped: this.framesSkipped, queuedBytes: this.#queued };
  }

  /** Start writing to `sink` (messages queued before are written first). */
  attach(sink: ScreenViewerSink): void {
    this.#sink = sink;
    this.#pump();
  }

  /** A text message that is never dropped (start, error). */
  control(text: string): void {
    this.#push({ data: text, bytes: byteLength(text), kind: 'control' });
  }

  /** Send no frame before the next key frame (a viewer that joins between key frames). */
  awaitKeyFrame(): void {
    this.#awaitingKey = true;
  }

  /** A frame (`key`: a key frame, which ends a skip). */
  frame(data: Uint8Array, key: boolean): void {
    if (this.#closed) return;
    if (this.#awaitingKey) {
      if (!key) return;
      this.#awaitingKey = false;
    }
    if (this.#dropped >= 0 && !key) {
      this.#dropped++;
      this.framesSkipped++;
      return;
    }
    if (this.#queued > 0 && this.#queued + data.byteLength > this.#bound) this.#fallBehind();
    if (this.#dropped >= 0) {
      if (!key) {
        this.#dropped++;
        this.framesSkipped++;
        return;
      }
      const text = JSON.stringify({ type: 'skipped', frames: this.#dropped });
      this.#push({ data: text, bytes: byteLength(text), kind: 'skipped', skipped: this.#dropped });
      this.#dropped = -1;
    }
    this.#push({ data, bytes: data.byteLength, kind: 'frame' });
  }

  /** Send `text` last, then close the sink once it is written. */
  end(text: string): void {
    if (this.#closed) return;
    // What is still queued would only delay the end: frames go, control messages stay.
    this.#dropQueued();
    this.#push({ data: text, bytes: byteLength(text), kind: 'control' });
    this.#closed = true;
    this.#pump();
  }

  /** The viewer went away: nothing more is written. */
  drop(): void {
    this.#closed = true;
    this.#queue.length = 0;
    this.#queued = 0;
    this.#inFlightBytes = 0;
    this.#sink = null;
  }

  /** Over the bound: every queued frame (and pending skip notice) is dropped; frames are dropped until a key frame. */
  #fallBehind(): void {
    this.#dropped = Math.max(0, this.#dropped) + this.#dropQueued();
  }

  /** Take queued frames and skip notices off the queue; the number of frames they stood for. */
  #dropQueued(): number {
    let frames = 0;
    for (let i = this.#queue.length - 1; i >= 0; i--) {
      const entry = this.#queue[i]!;
      if (entry.kind === 'control') continue;
      frames += entry.kind === 'frame' ? 1 : (entry.skipped ?? 0);
      if (entry.kind === 'frame') this.framesSkipped++;
      this.#queued -= entry.bytes;
      this.#queue.splice(i, 1);
    }
    return frames;
  }

  #push(entry: Entry): void {
    if (this.#closed) return;
    this.#queue.push(entry);
    this.#queued += entry.bytes;
    this.#pump();
  }

  #pump(): void {
    const sink = this.#sink;
    if (sink === null || this.#inFlight) return;
    const entry = this.#queue.shift();
    if (entry === undefined) {
      if (this.#closed) {
        this.#sink = null;
        sink.close();
      }
      return;
    }
    this.#inFlight = true;
    this.#inFlightBytes = entry.bytes;
    if (entry.kind === 'frame') this.framesSent++;
    sink.send(entry.data, this.#written);
  }

  /** The message in flight was written (one callback for every send: no closure per frame). */
  readonly #written = (err?: Error | null): void => {
    this.#inFlight = false;
    this.#queued -= this.#inFlightBytes;
    this.#inFlightBytes = 0;
    if (err) {
      this.drop();
      this.#onGone?.();
      return;
    }
    this.#pump();
  };
}

/**
 * The fan-out of one device stream: the current `start` message, the SPS/PPS, the frames since the
 * last key frame (for a viewer that joins), and the viewers' queues. Pure: events in, messages out.
 */
export class ScreenFanout {
  readonly #queueBytes: number;
  readonly viewers = new Set<ViewerQueue>();
  #info: ScreenStreamInfo | null = null;
  #start: string | null = null;
  #startMessage: ScreenStartMessage | null = null;
  #config: Uint8Array | null = null;
  /** The frames since the last key frame (it first), while they fit a viewer's queue; null when not. */
  #gop: Array<{ data: Uint8Array; key: boolean }> | null = null;
  #gopBytes = 0;
  #awaitingConfig = false;

  constructor(queueBytes: number) {
    this.#queueBytes = queueBytes;
  }

  /** The stream's current shape, once its `start` (and SPS) came. */
  get start(): ScreenStartMessage | null {
    return this.#startMessage;
  }

  add(queue: ViewerQueue): void {
    this.viewers.add(queue);
    if (this.#start !== null) queue.control(this.#start);
    // The frames since the last key frame when they were kept, else the next key frame first.
    if (this.#gop === null || this.#gop.length === 0) queue.awaitKeyFrame();
    for (const f of this.#gop ?? []) queue.frame(f.data, f.key);
  }

  remove(queue: ViewerQueue): void {
    this.viewers.delete(queue);
  }

  push(event: ScreenEvent): void {
    if (event.type === 'start') {
      // A new shape: the SPS/PPS and frames of the old one no longer apply; the start message goes
      // out with the new SPS (its codec string).
      this.#info = event.info;
      this.#config = null;
      this.#gop = null;
      this.#gopBytes = 0;
      this.#awaitingConfig = true;
      return;
    }
    const { packet } = event;
    if (packet.config) {
      this.#config = packet.data;
      if (this.#awaitingConfig && this.#info !== null) {
        this.#awaitingConfig = false;
        const sps = findNal(packet.data, NAL_SPS);
        if (sps === null) throw new BridgeError('HELPER_PROTOCOL_ERROR', 'the stream’s config has no SPS');
        // The device driver read it from the same SPS (ScreenStreamInfo.codecString) when it could.
        const codec = this.#info.codecString ?? codecString(sps);
        const { width, height, displayWidth, displayHeight, source } = this.#info;
        this.#startMessage = { type: 'start', codec, width, height, displayWidth, displayHeight, source };
        this.#start = JSON.stringify(this.#startMessage);
        for (const v of this.viewers) v.control(this.#start);
      }
      return;
    }
    // Frames before the stream's first start and config cannot be decoded by anyone.
    if (this.#start === null || this.#awaitingConfig) return;
    const data = packetMessage(
      packet.key,
      packet.pts,
      packet.key && this.#config !== null && !startsWith(packet.data, this.#config) ? this.#config : null,
      packet.data,
    );
    if (packet.key) {
      this.#gop = [];
      this.#gopBytes = 0;
    }
    if (this.#gop !== null) {
      this.#gopBytes += data.byteLength;
      if (this.#gopBytes > this.#queueBytes) this.#gop = null;
      else this.#gop.push({ data, key: packet.key });
    }
    for (const v of this.viewers) v.frame(data, packet.key);
  }

  /** End every viewer with `reason`. */
  end(reason: ScreenEndReason, message: string): void {
    const text = JSON.stringify({ type: 'end', reason, message });
    for (const v of this.viewers) v.end(text);
    this.viewers.clear();
  }
}

/**
 * The binary message of one access unit (`config` before it when given), copied once into a buffer
 * from Node's pool (a small frame shares a pooled slab instead of a backing store of its own).
 */
function packetMessage(key: boolean, pts: number, config: Uint8Array | null, unit: Uint8Array): Buffer {
  const before = config === null ? 0 : config.byteLength;
  const out = Buffer.allocUnsafe(PACKET_HEADER_BYTES + before + unit.byteLength);
  writePacketMessageHeader(out, key, pts);
  if (config !== null) out.set(config, PACKET_HEADER_BYTES);
  out.set(unit, PACKET_HEADER_BYTES + before);
  return out;
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.byteLength < prefix.byteLength) return false;
  for (let i = 0; i < prefix.byteLength; i++) if (data[i] !== prefix[i]) return false;
  return true;
}

/** One lease's device stream on this node. */
class LeaseScreen {
  readonly fanout: ScreenFanout;
  readonly controller = new AbortController();
  /** How its viewers' pointers reach the glass agent, and whose finger is down. */
  readonly touch = new TouchChannel();
  source: ScreenSource | null = null;
  /** The device stream's run: opening it, reading it, stopping it. */
  running: Promise<void> = Promise.resolve();
  linger: ReturnType<typeof setTimeout> | undefined;
  ended = false;
  /** Takes the stream off the lease's resource list. */
  forget: () => void = () => undefined;

  constructor(queueBytes: number) {
    this.fanout = new ScreenFanout(queueBytes);
  }
}

/** A viewer of a lease's screen: attach its connection, send its input, leave. */
export interface ScreenViewer {
  readonly queue: ViewerQueue;
  /** Start writing to the viewer's connection. */
  attach(sink: ScreenViewerSink): void;
  /** One input message; a failure is answered to this viewer as an `error` message. */
  input(message: ScreenInput): void;
  /** The viewer left (its connection closed). */
  leave(): void;
  /** End this viewer alone (its connection is going away): `end` is sent, then the connection closes. */
  end(reason: ScreenEndReason, message: string): void;
}

export interface ScreenCapabilityOptions {
  open?: OpenScreenSource | undefined;
  limits?: Partial<ScreenLimits> | undefined;
  now?: () => number;
}

export class ScreenCapability {
  readonly #sessions: LeaseSessions;
  readonly #glass: Pick<GlassCapability, 'agent'>;
  readonly #open: OpenScreenSource | undefined;
  readonly #limits: ScreenLimits;
  readonly #now: () => number;
  readonly #streams = new Map<string, LeaseScreen>();

  constructor(
    sessions: LeaseSessions,
    glass: Pick<GlassCapability, 'agent'>,
    options: ScreenCapabilityOptions = {},
  ) {
    this.#sessions = sessions;
    this.#glass = glass;
    this.#open = options.open;
    this.#limits = { ...SCREEN_LIMITS, ...options.limits };
    this.#now = options.now ?? (() => performance.now());
  }

  get limits(): ScreenLimits {
    return this.#limits;
  }

  /** The viewers of each lease's stream on this node (tests, metrics). */
  stats(leaseId: string): ViewerStats[] {
    return [...(this.#streams.get(leaseId)?.fanout.viewers ?? [])].map((v) => v.stats());
  }

  /**
   * Join the lease's screen: checks the lease (ended: LEASE_EXPIRED) and the viewer cap
   * (RATE_LIMITED), starts the device stream for the first viewer with `options` (later viewers join
   * it as it runs). The viewer's messages wait in its queue until `attach`.
   */
  async join(lease: LeaseTarget, options: ScreenStreamOptions = {}): Promise<ScreenViewer> {
    const open = this.#open;
    if (open === undefined) {
      throw new BridgeError('UNAVAILABLE', 'this bridge node has no live screen source configured', {
        retryable: false,
      });
    }
    // The lease may end while the viewer joins (the operation's last fence check): it leaves again.
    let viewer: ScreenViewer | undefined;
    try {
      return await this.#join(lease, open, options, (joined) => {
        viewer = joined;
      });
    } catch (err) {
      viewer?.leave();
      throw err;
    }
  }

  #join(
    lease: LeaseTarget,
    open: OpenScreenSource,
    options: ScreenStreamOptions,
    joined: (viewer: ScreenViewer) => void,
  ): Promise<ScreenViewer> {
    return this.#sessions.operate(lease, async (session) => {
      let stream = this.#streams.get(lease.id);
      if (stream !== undefined && stream.fanout.viewers.size >= this.#limits.maxViewers) {
        throw new BridgeError(
          'RATE_LIMITED',
          `lease ${lease.id} has ${stream.fanout.viewers.size} screen viewers, the most one lease may have (DEVICEBRIDGE_SCREEN_MAX_VIEWERS=${this.#limits.maxViewers})`,
          { retryable: true, details: { maxViewers: this.#limits.maxViewers } },
        );
      }
      if (stream === undefined) {
        const created = new LeaseScreen(this.#limits.queueBytes);
        stream = created;
        this.#streams.set(lease.id, created);
        // Teardown starts: viewers are told at once; the resource's close (below) records the stop.
        const onAbort = () =>
          this.#end(lease, created, 'lease-ended', `lease ${lease.id} has ended`, { keepResource: true });
        session.controller.signal.addEventListener('abort', onAbort, { once: true });
        created.forget = session.resources.add('live screen', async () => {
          session.controller.signal.removeEventListener('abort', onAbort);
          this.#end(lease, created, 'lease-ended', `lease ${lease.id} has ended`);
          await created.source?.close();
          // A stream still starting is stopped once it is there: nothing of it outlives the lease.
          await created.running;
          return { actions: ['stopped the live screen'] };
        });
        created.running = this.#run(lease, created, open, options);
      }
      clearTimeout(stream.linger);
      stream.linger = undefined;
      const viewer = this.#viewer(lease, stream);
      joined(viewer);
      return viewer;
    });
  }

  #viewer(lease: LeaseTarget, stream: LeaseScreen): ScreenViewer {
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      input.leave();
      queue.drop();
      stream.fanout.remove(queue);
      if (stream.fanout.viewers.size === 0 && !stream.ended) {
        clearTimeout(stream.linger);
        stream.linger = setTimeout(() => {
          if (stream.fanout.viewers.size === 0) this.#stop(lease, stream);
        }, this.#limits.lingerMs);
        stream.linger.unref?.();
      }
    };
    const queue = new ViewerQueue(this.#limits.queueBytes, leave);
    stream.fanout.add(queue);
    const reply = (err: unknown) => {
      const code = isBridgeError(err) ? err.code : 'INTERNAL';
      const message = err instanceof Error ? err.message : String(err);
      if (!queue.closed) queue.control(JSON.stringify({ type: 'error', code, message }));
    };
    const input = new ViewerInput({
      channel: stream.touch,
      call: (op, fields) => this.#glass.agent(lease, op, fields),
      reply,
      now: this.#now,
    });
    return {
      queue,
      attach: (sink) => queue.attach(sink),
      leave,
      end: (reason, message) => {
        input.leave();
        stream.fanout.remove(queue);
        queue.end(JSON.stringify({ type: 'end', reason, message }));
      },
      input: (message) => {
        if (left || stream.ended) return;
        try {
          if (message.type === 'key') input.key(message.key);
          else if (message.type === 'text') input.text(message.text);
          else if (message.action === 'cancel') input.pointer('cancel');
          else {
            let point: { x: number; y: number };
            try {
              point = this.#toDisplay(stream, message.x, message.y);
            } catch (err) {
              // An up that cannot be mapped still ends the finger: nothing stays down on the device.
              if (message.action === 'up') input.pointer('cancel');
              throw err;
            }
            input.pointer(message.action, point);
          }
        } catch (err) {
          reply(err);
        }
      },
    };
  }

  /** Picture pixels to display pixels (the picture is the display scaled). */
  #toDisplay(stream: LeaseScreen, x: number, y: number): { x: number; y: number } {
    const start = stream.fanout.start;
    if (start === null) throw invalid('the picture has not started yet: wait for the start message');
    if (x >= start.width || y >= start.height) {
      throw invalid(`(${x}, ${y}) is outside the ${start.width}×${start.height} picture`);
    }
    const scale = (v: number, from: number, to: number) => Math.min(to - 1, Math.round((v * to) / from));
    return { x: scale(x, start.width, start.displayWidth), y: scale(y, start.height, start.displayHeight) };
  }

  async #run(lease: LeaseTarget, stream: LeaseScreen, open: OpenScreenSource, options: ScreenStreamOptions) {
    let reason: ScreenEndReason = 'stream-failed';
    let message = 'the device stream ended';
    try {
      const source = await open(lease, options, stream.controller.signal);
      stream.source = source;
      if (stream.ended) {
        await source.close();
        return;
      }
      for await (const event of source.events()) {
        if (stream.ended) break;
        stream.fanout.push(event);
      }
    } catch (err) {
      if (isBridgeError(err) && (err.code === 'DEVICE_OFFLINE' || err.code === 'UNAUTHORIZED_DEVICE'))
        reason = 'device-offline';
      message = err instanceof Error ? err.message : String(err);
      this.#sessions.options.logger?.warn({ leaseId: lease.id, err: message }, 'live screen failed');
    }
    if (!stream.ended) this.#end(lease, stream, reason, message);
    await stream.source?.close().catch(() => undefined);
  }

  /** The last viewer left a while ago: stop the device stream. */
  #stop(lease: LeaseTarget, stream: LeaseScreen): void {
    this.#end(lease, stream, 'stream-failed', 'no viewers');
  }

  /**
   * End the stream: viewers get `end`, the device side stops, the lease forgets it (unless teardown
   * is closing it as one of the lease's resources: `keepResource`).
   */
  #end(
    lease: LeaseTarget,
    stream: LeaseScreen,
    reason: ScreenEndReason,
    message: string,
    options: { keepResource?: boolean } = {},
  ): void {
    if (stream.ended) return;
    stream.ended = true;
    clearTimeout(stream.linger);
    stream.fanout.end(reason, message);
    stream.controller.abort(leaseEnded(lease.id));
    void stream.source?.close().catch(() => undefined);
    if (this.#streams.get(lease.id) === stream) this.#streams.delete(lease.id);
    if (options.keepResource) return;
    stream.forget();
    const session = this.#sessions.get(lease.id);
    if (session && !session.ending && session.running.size === 0 && session.resources.size === 0) {
      this.#sessions.drop(lease.id, session);
    }
  }
}

function invalid(message: string): BridgeError {
  return new BridgeError('INVALID_ARGUMENT', message);
}

/**
 * The live screen of a lease's device through the bridge's own helpers (the room's default
 * `openScreenSource`): the glass agent's encoder when a release of the agent is published (its jar
 * verified into the artifact cache), else `screenrecord`; the forward is owned by the lease.
 */
export function deviceScreenSource(sessions: LeaseSessions): OpenScreenSource {
  return async (lease, options, signal) => {
    const o = sessions.options;
    const manifest = await companionRelease(o.releases, GLASS_AGENT).catch((err: unknown) => {
      // No agent release (or not a jar): screenrecord alone.
      if (isBridgeError(err) && (err.code === 'NOT_FOUND' || err.code === 'COMPANION_UNSUPPORTED'))
        return null;
      throw err;
    });
    const agent =
      manifest === null
        ? undefined
        : { manifest, jarPath: await artifactSource(o.cache, o.store, manifest)() };
    signal.throwIfAborted();
    const source = await openScreenSource(sessions.device(lease.serial), {
      ...options,
      owner: lease.id,
      ...(agent === undefined ? {} : { agent }),
      ...(o.logger === undefined ? {} : { logger: o.logger }),
    });
    if (signal.aborted) {
      await source.close();
      signal.throwIfAborted();
    }
    return source;
  };
}
