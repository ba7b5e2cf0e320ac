/**
 * Waiting for an event instead of for a time: a bounded poll of a condition. A test waits for what
 * it needs (a counter moved, a state reached), never sleeps a guessed time before an assertion.
 */

export interface WaitForOptions {
  /** What is waited for, named in the failure ("node-0 entered the gesture handler"). */
  what: string;
  /** Give up after this long (default 10 s): a bound for a loaded machine, not a measured time. */
  timeoutMs?: number;
  /** Pause between checks (default 20 ms). */
  intervalMs?: number;
}

/**
 * Poll `condition` until it answers something other than `false`, `null` or `undefined`, and
 * resolve that answer. A check that throws is retried (the last error is named on timeout). Fails
 * naming `what` and the last answer when `timeoutMs` passes first.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions,
): Promise<Exclude<T, false | null | undefined>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const answer = await condition();
      if (answer !== false && answer !== null && answer !== undefined) {
        return answer as Exclude<T, false | null | undefined>;
      }
      last = answer;
    } catch (error) {
      last = error;
    }
    if (performance.now() >= deadline) {
      const seen = last instanceof Error ? `${last.name}: ${last.message}` : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what} (last: ${seen})`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
