/**
 * The glass agent as a device runs it (the glass contract, `localabstract:glass-agent`): ping, clipboard
 * get/set, pointer gestures, streamed touches (`touch`, our extension), key chords and Unicode text,
 * over the line protocol. The device model behind it (clipboard, input) is the host's; this class is
 * the protocol, one instance per connection (a streamed touch belongs to its connection: a finger
 * still down when the connection ends is cancelled, `connectionEnded`), as the Java agent's
 * AgentProtocol and TouchStream, whose rules and messages these are.
 */
import { type KeyChord, KeyChordError, parseKeyChord } from '../../protocol/helper/key-chord.ts';
import {
  answerGlassLine,
  finiteNumber,
  GlassRequestError,
  glassInteger,
  glassOk,
  optString,
  requiredString,
} from './line-protocol.ts';

export interface PointerSample {
  x: number;
  y: number;
  tMs: number;
}

/** One event of a streamed touch, as the agent injects it (a MotionEvent action of one finger). */
export interface TouchEvent {
  action: 'down' | 'move' | 'up' | 'cancel';
  x: number;
  y: number;
}

/** What the agent does on the device. */
export interface GlassAgentHost {
  clipboardGet(): string | null;
  clipboardSet(text: string): void;
  pointer(gesture: PointerSample[], button: string | null): void;
  /** One event of a streamed touch (the protocol keeps the order: down, moves, then up or cancel). */
  touch(event: TouchEvent): void;
  key(chord: KeyChord): void;
  text(text: string): void;
}

/** gesture: a non-empty array of {x, y, t_ms}; t_ms integers from 0, never decreasing. */
export function parseGesture(value: unknown): PointerSample[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new GlassRequestError('gesture must be a non-empty array of {x,y,t_ms}');
  }
  let previous = 0;
  return value.map((item: unknown, i): PointerSample => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new GlassRequestError(`gesture[${i}] must be {x,y,t_ms}`);
    }
    const o = item as Record<string, unknown>;
    const x = finiteNumber(Object.hasOwn(o, 'x') ? o['x'] : undefined);
    const y = finiteNumber(Object.hasOwn(o, 'y') ? o['y'] : undefined);
    const t = glassInteger(Object.hasOwn(o, 't_ms') ? o['t_ms'] : undefined);
    if (x === null || y === null)
      throw new GlassRequestError(`gesture[${i}]: x and y must be finite numbers`);
    if (t === null || t < 0) throw new GlassRequestError(`gesture[${i}].t_ms must be an integer >= 0`);
    if (t < previous)
      throw new GlassRequestError(`gesture[${i}].t_ms must not decrease (${t} after ${previous})`);
    previous = t;
    return { x, y, tMs: t };
  });
}

export interface GlassAgentQuirks {
  /**
   * 'refuse' (our agent, the contract streams): a chord naming an unknown key is an error reply.
   * 'ignore' (the upstream glass agent): it is a silent success — ok:true, no key event.
   */
  unknownKey: 'refuse' | 'ignore';
  /** Whether the agent has the `touch` op (the glass contract's upstream agent does not: an unknown op). */
  touch: boolean;
}

const TOUCH_ACTIONS: ReadonlySet<string> = new Set(['down', 'move', 'up', 'cancel']);

/**
 * One connection's streamed touch (Java's TouchStream): a down while a finger is down cancels that
 * one first where it last was; move and up need a finger down; cancel with none down does nothing;
 * a finger stays down until its up or cancel was injected.
 */
class TouchStream {
  readonly #host: GlassAgentHost;
  #last: { x: number; y: number } | null = null;

  constructor(host: GlassAgentHost) {
    this.#host = host;
  }

  handle(action: string, x: number | null, y: number | null): void {
    const last = this.#last;
    if (action === 'cancel') {
      if (last !== null) this.#end('cancel', last.x, last.y);
      return;
    }
    if (!TOUCH_ACTIONS.has(action)) throw new GlassRequestError('action must be down, move, up or cancel');
    if (x === null || y === null)
      throw new GlassRequestError(`touch ${action}: x and y must be finite numbers`);
    if (action === 'down') {
      if (last !== null) this.#end('cancel', last.x, last.y);
      this.#host.touch({ action: 'down', x, y });
    } else if (last === null) {
      throw new GlassRequestError(`touch ${action} without a touch down`);
    } else if (action === 'move') {
      this.#host.touch({ action: 'move', x, y });
    } else {
      this.#end('up', x, y);
      return;
    }
    this.#last = { x, y };
  }

  /** The connection ended: a finger still down is cancelled where it last was. */
  release(): void {
    if (this.#last !== null) this.#end('cancel', this.#last.x, this.#last.y);
  }

  #end(action: 'up' | 'cancel', x: number, y: number): void {
    this.#host.touch({ action, x, y });
    this.#last = null;
  }
}

const UNKNOWN_KEY = /^unknown key "/;

export class GlassAgentProtocol {
  readonly #host: GlassAgentHost;
  readonly #quirks: GlassAgentQuirks;
  readonly #touch: TouchStream;

  constructor(host: GlassAgentHost, quirks: GlassAgentQuirks = { unknownKey: 'refuse', touch: true }) {
    this.#host = host;
    this.#quirks = quirks;
    this.#touch = new TouchStream(host);
  }

  /** The connection ended: a finger it left down is released (a refusal is nobody's to hear). */
  connectionEnded(): void {
    try {
      this.#touch.release();
    } catch {
      // The device refused the cancel too; nothing more can be done from here.
    }
  }

  /** The reply line (without its newline) to one request line. */
  handle(line: string): string {
    return answerGlassLine(line, (id, request) => {
      const op = requiredString(request, 'op');
      switch (op) {
        case 'ping':
          return glassOk(id);
        case 'clipboard_get':
          return glassOk(id, { text: this.#host.clipboardGet() ?? '' });
        case 'clipboard_set':
          this.#host.clipboardSet(requiredString(request, 'text'));
          return glassOk(id);
        case 'pointer':
          this.#host.pointer(
            parseGesture(Object.hasOwn(request, 'gesture') ? request['gesture'] : undefined),
            optString(request, 'button'),
          );
          return glassOk(id);
        case 'touch':
          if (!this.#quirks.touch) throw new GlassRequestError(`unknown op: ${op}`);
          this.#touch.handle(
            requiredString(request, 'action'),
            finiteNumber(Object.hasOwn(request, 'x') ? request['x'] : undefined),
            finiteNumber(Object.hasOwn(request, 'y') ? request['y'] : undefined),
          );
          return glassOk(id);
        case 'key': {
          const chord = requiredString(request, 'chord');
          try {
            this.#host.key(parseKeyChord(chord));
          } catch (err) {
            if (
              err instanceof KeyChordError &&
              this.#quirks.unknownKey === 'ignore' &&
              UNKNOWN_KEY.test(err.message)
            ) {
              return glassOk(id);
            }
            if (err instanceof KeyChordError) throw new GlassRequestError(err.message);
            throw err;
          }
          return glassOk(id);
        }
        case 'text':
          this.#host.text(requiredString(request, 'text'));
          return glassOk(id);
        default:
          throw new GlassRequestError(`unknown op: ${op}`);
      }
    });
  }
}
