/**
 * One live-screen viewer's input on its way to the lease's glass agent (docs/live-screen.md, Input):
 * the viewer's messages in order, one agent request at a time.
 *
 * Pointers are streamed: each down, move and up is the agent's `touch` op as it comes, so the
 * device sees the finger while it is still down. While a request is in flight, moves that wait
 * behind it are coalesced to the latest (a move is replaced only by the next move, never passed by
 * anything); downs, ups, keys and text are never dropped or reordered. An agent that does not know
 * `touch` (its unknown-op error) puts the lease's stream in gesture mode: from then on a pointer is
 * collected and sent as one `pointer` gesture when it goes up, with every point (up to
 * MAX_GESTURE_POINTS) and its timing — the finger the agent refused included.
 *
 * One finger per lease: while one viewer's finger is down (until its up or cancel was answered),
 * another viewer's down is refused (CONFLICT). A viewer that leaves with a finger down cancels it.
 * When a touch request of a finger fails, the failure is answered once, a `cancel` follows (nothing
 * is left down on the device) and the rest of that finger is not sent.
 */
import { BridgeError, isBridgeError } from '../errors.ts';

/** The most points one pointer gesture carries to the glass agent (its limit); later moves are dropped. */
export const MAX_GESTURE_POINTS = 1000;

/** One request to the lease's glass agent. */
export type AgentCall = (op: string, fields: Record<string, unknown>) => Promise<unknown>;

/** A point on the display (the picture already mapped). */
export interface DisplayPoint {
  x: number;
  y: number;
}

/**
 * How pointers reach the agent for one lease's live screen, shared by its viewers: `unknown` until
 * the agent answered a first `touch`, then `stream` or (it has no such op) `gesture`; and whose
 * finger is down.
 */
export class TouchChannel {
  mode: 'unknown' | 'stream' | 'gesture' = 'unknown';
  owner: ViewerInput | null = null;
}

/** One finger of one viewer, from its down to its up or cancel. */
interface Finger {
  started: number;
  /** Every point with its time since the down, for gesture mode. */
  points: Array<{ x: number; y: number; t_ms: number }>;
  /** A touch request of this finger failed (and a cancel followed): the rest is not sent. */
  failed: boolean;
}

type Item =
  | { kind: 'call'; op: string; fields: Record<string, unknown> }
  | { kind: 'touch'; action: 'down' | 'move' | 'up' | 'cancel'; x: number; y: number; finger: Finger };

/** Whether `err` is the agent's answer to an op it does not have. */
export function isUnknownOp(err: unknown, op: string): boolean {
  return (
    isBridgeError(err) && err.code === 'HELPER_FAILED' && err.details?.['deviceError'] === `unknown op: ${op}`
  );
}

export interface ViewerInputOptions {
  channel: TouchChannel;
  call: AgentCall;
  /** A failure to tell the viewer (an `error` message). */
  reply: (err: unknown) => void;
  now?: () => number;
}

export class ViewerInput {
  readonly #channel: TouchChannel;
  readonly #call: AgentCall;
  readonly #reply: (err: unknown) => void;
  readonly #now: () => number;
  readonly #queue: Item[] = [];
  #running = false;
  /** The finger that is down (its up not yet given); null when none. */
  #finger: Finger | null = null;
  /** The finger whose up or cancel is given but not yet answered (it still owns the channel). */
  #ending: Finger | null = null;
  /** A down of this viewer was refused: its moves and up are dropped quietly until the next down. */
  #refused = false;
  #idle: Array<() => void> = [];

  constructor(options: ViewerInputOptions) {
    this.#channel = options.channel;
    this.#call = options.call;
    this.#reply = options.reply;
    this.#now = options.now ?? (() => performance.now());
  }

  key(chord: string): void {
    this.#push({ kind: 'call', op: 'key', fields: { chord } });
  }

  text(text: string): void {
    this.#push({ kind: 'call', op: 'text', fields: { text } });
  }

  /**
   * A pointer event at `point` on the display. `cancel` ends the finger without a click (an up the
   * bridge could not map, a viewer that left). Throws INVALID_ARGUMENT for a move or up with no
   * finger down, CONFLICT for a down while another viewer's finger is down.
   */
  pointer(action: 'down' | 'move' | 'up' | 'cancel', point: DisplayPoint = { x: 0, y: 0 }): void {
    const now = this.#now();
    if (action === 'down') {
      const owner = this.#channel.owner;
      if (owner !== null && owner !== this) {
        this.#refused = true;
        throw new BridgeError(
          'CONFLICT',
          'another viewer of this lease has a pointer down: one pointer at a time; try again once it is up',
        );
      }
      this.#refused = false;
      this.#channel.owner = this;
      const finger: Finger = { started: now, points: [{ ...point, t_ms: 0 }], failed: false };
      this.#finger = finger;
      this.#push({ kind: 'touch', action, ...point, finger });
      return;
    }
    const finger = this.#finger;
    if (finger === null) {
      if (this.#refused || action === 'cancel') {
        if (action !== 'move') this.#refused = false;
        return;
      }
      throw new BridgeError('INVALID_ARGUMENT', `pointer ${action} without a pointer down`);
    }
    if (action !== 'cancel') {
      const at = Math.max(finger.points.at(-1)!.t_ms, Math.round(now - finger.started));
      if (action === 'up' || finger.points.length < MAX_GESTURE_POINTS - 1)
        finger.points.push({ ...point, t_ms: at });
    }
    if (action === 'move') {
      this.#push({ kind: 'touch', action, ...point, finger });
      return;
    }
    this.#finger = null;
    this.#ending = finger;
    this.#push({ kind: 'touch', action, ...point, finger });
  }

  /** The viewer left: a finger it has down is cancelled (what is queued still goes, in order). */
  leave(): void {
    if (this.#finger !== null) this.pointer('cancel');
    else if (this.#channel.owner === this && this.#ending === null) this.#channel.owner = null;
  }

  /** Resolves once nothing is queued or in flight (tests). */
  idle(): Promise<void> {
    if (!this.#running && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #push(item: Item): void {
    const last = this.#queue.at(-1);
    if (
      item.kind === 'touch' &&
      item.action === 'move' &&
      last?.kind === 'touch' &&
      last.action === 'move' &&
      last.finger === item.finger
    ) {
      // Waiting behind a request in flight: only the latest position matters.
      last.x = item.x;
      last.y = item.y;
      return;
    }
    this.#queue.push(item);
    this.#pump();
  }

  #pump(): void {
    if (this.#running) return;
    const item = this.#queue.shift();
    if (item === undefined) {
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#running = true;
    void this.#run(item).finally(() => {
      this.#running = false;
      this.#pump();
    });
  }

  async #run(item: Item): Promise<void> {
    if (item.kind === 'call') {
      await this.#call(item.op, item.fields).catch(this.#reply);
      return;
    }
    const { action, finger } = item;
    try {
      await this.#touch(item);
    } finally {
      if ((action === 'up' || action === 'cancel') && this.#ending === finger) {
        this.#ending = null;
        if (this.#channel.owner === this && this.#finger === null) this.#channel.owner = null;
      }
    }
  }

  async #touch(item: Extract<Item, { kind: 'touch' }>): Promise<void> {
    const { action, finger } = item;
    const channel = this.#channel;
    if (channel.mode === 'gesture') {
      if (action === 'up') await this.#gesture(finger);
      return;
    }
    // The rest of a finger whose request failed is not sent: the failure already cancelled it.
    if (finger.failed) return;
    const fields = action === 'cancel' ? { action } : { action, x: item.x, y: item.y };
    try {
      await this.#call('touch', fields);
      if (channel.mode === 'unknown') channel.mode = 'stream';
    } catch (err) {
      if (isUnknownOp(err, 'touch')) {
        // This agent has no streamed touch: one gesture on up, for the rest of the lease's stream.
        channel.mode = 'gesture';
        if (action === 'up') await this.#gesture(finger);
        return;
      }
      finger.failed = true;
      this.#reply(err);
      // Nothing of this finger may stay down on the device (a cancel with none down is nothing).
      if (action !== 'cancel') await this.#call('touch', { action: 'cancel' }).catch(() => undefined);
    }
  }

  async #gesture(finger: Finger): Promise<void> {
    await this.#call('pointer', { gesture: finger.points }).catch(this.#reply);
  }
}
