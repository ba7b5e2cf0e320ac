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

/**
 * A timeout that counts only the time the event loop was responsive: it ticks every `tickMs` and
 * each tick counts at most `2 * tickMs`, so a stretch of the process's own work (a busy event loop
 * under a flood of device output) is not blamed on the dependency being waited for, while a
 * dependency that does not answer a responsive process still times out after about `ms`.
 * `signal` aborts then (its reason names `ms`); `dispose()` stops the ticks.
 */
export function responsiveTimeout(ms: number, tickMs = 50): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let left = ms;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    left -= Math.min(now - last, 2 * tickMs);
    last = now;
    if (left > 0) return;
    clearInterval(tick);
    controller.abort(new Error(`no answer within ${ms} ms`));
  }, tickMs);
  tick.unref();
  return { signal: controller.signal, dispose: () => clearInterval(tick) };
}
