/**
 * The glass agent as a device runs it (seed 001, `localabstract:glass-agent`): ping, clipboard
 * get/set, pointer gestures, key chords and Unicode text, over the line protocol. The device model
 * behind it (clipboard, input) is the host's; this class is the protocol, one instance per device.
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

/** What the agent does on the device. */
export interface GlassAgentHost {
  clipboardGet(): string | null;
  clipboardSet(text: string): void;
  pointer(gesture: PointerSample[], button: string | null): void;
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
   * 'ignore' (seed 001's upstream agent): it is a silent success — ok:true, no key event.
   */
  unknownKey: 'refuse' | 'ignore';
}

const UNKNOWN_KEY = /^unknown key "/;

export class GlassAgentProtocol {
  readonly #host: GlassAgentHost;
  readonly #quirks: GlassAgentQuirks;

  constructor(host: GlassAgentHost, quirks: GlassAgentQuirks = { unknownKey: 'refuse' }) {
    this.#host = host;
    this.#quirks = quirks;
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
