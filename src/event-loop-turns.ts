/**
 * A budget of work per turn of the event loop, for pull-based streams. A web ReadableStream pulled
 * by a fast reader (an HTTP response whose socket takes every write at once) runs pull after pull
 * in microtasks: a whole answer, or a device's output for as long as it flows, is produced without
 * the event loop ever turning, and timers, sockets and other requests (the node heartbeat, /readyz,
 * the adb server's answers) wait behind it. `spend(bytes)` counts the work done; past `bytesPerTurn`
 * it resolves only after the next turn (`setImmediate`: pending I/O and expired timers run first).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Bytes a stream produces per event-loop turn by default. */
export const TURN_BYTES = 256 * 1024;

export class TurnBudget {
  readonly #bytesPerTurn: number;
  #spent = 0;

  constructor(bytesPerTurn = TURN_BYTES) {
    this.#bytesPerTurn = bytesPerTurn;
  }

  /** Count `bytes` of work; resolves at once within the turn's budget, else after the next turn. */
  spend(bytes: number): Promise<void> | undefined {
    this.#spent += bytes;
    if (this.#spent < this.#bytesPerTurn) return undefined;
    this.#spent = 0;
    return nextTurn().then(() => undefined);
  }
}
