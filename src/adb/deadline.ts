/** Native promises with a deadline: every adb operation is bounded by a timeout and/or an AbortSignal. */
import { BridgeError } from '../errors.ts';

export interface Deadline {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** The whole operation's timeout, for messages, when `timeoutMs` is what remains of it. */
  totalMs?: number | undefined;
}

/**
 * One deadline for an operation of several steps (connect, each OKAY, the reply, the exit status):
 * every call of the returned function is the next step's deadline — the caller's signal and what
 * remains of the caller's `timeoutMs` (`defaultMs` when it gave none) — so the operation as a whole,
 * never each step again, is bounded by it.
 */
export function deadlineBudget(deadline: Deadline, defaultMs: number): () => Deadline {
  const totalMs = deadline.timeoutMs ?? defaultMs;
  const end = Date.now() + totalMs;
  // At least 1 ms: a spent budget still times out (0 would mean no timer at all).
  return () => ({ signal: deadline.signal, timeoutMs: Math.max(1, end - Date.now()), totalMs });
}

/**
 * Await `work` (any thenable) until it settles, the signal aborts or the timeout passes; on abort or
 * timeout `cancel` runs (destroy the socket, cancel the transfer) and the promise rejects with TIMEOUT.
 */
export function withDeadline<T>(
  work: PromiseLike<T>,
  deadline: Deadline,
  what: string,
  cancel?: () => void,
): Promise<T> {
  const { signal, timeoutMs, totalMs } = deadline;
  if (signal?.aborted) {
    cancel?.();
    return Promise.reject(new BridgeError('TIMEOUT', `${what}: aborted`));
  }
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      cancel?.();
      reject(
        new BridgeError(
          'TIMEOUT',
          `${what}: ${signal?.aborted ? 'aborted' : `no answer within ${totalMs ?? timeoutMs} ms`}`,
        ),
      );
    };
    if (timeoutMs !== undefined && timeoutMs > 0) timer = setTimeout(onAbort, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(work).then(
      (v) => {
        finish();
        resolve(v);
      },
      (e) => {
        finish();
        reject(e);
      },
    );
  });
}

/**
 * A request's one deadline, made once where the request starts and handed down as `signal`: the
 * only way a request deadline is made (the lease's operations, the snapshot driver, one-shot runs,
 * the helper session). `signal` aborts when any of the caller's signals does (with its reason) or
 * when the deadline passes (with `expired()`'s reason); a listener on each caller signal, removed by
 * `dispose`, instead of AbortSignal.any (which keeps a weak reference on a long-lived lease signal
 * per request). Without `expired` there is no timer: the signal carries cancellation only and each
 * step bounds itself with `remainingMs()`.
 */
export interface RequestDeadline {
  /** When the request started (`performance.now()`). */
  readonly startedAt: number;
  /** The whole request's budget. */
  readonly deadlineMs: number;
  /** `startedAt + deadlineMs`. */
  readonly deadlineAt: number;
  readonly signal: AbortSignal;
  /** The deadline passed (the signal aborted with `expired()`'s reason). */
  readonly timedOut: boolean;
  /** What is left of the budget, at least 1 ms (a spent budget still times out; 0 means no timer). */
  remainingMs(): number;
  /** Stop the timer and leave the caller's signals. */
  dispose(): void;
}

export interface RequestDeadlineOptions {
  /** The whole request's budget (Infinity: cancellation only). */
  deadlineMs: number;
  /** When the request started, if earlier work counts against it (default: now). */
  startedAt?: number | undefined;
  /** The caller's cancellations (the request's own, its lease's); undefined entries are skipped. */
  signals?: ReadonlyArray<AbortSignal | undefined>;
  /** The reason the signal aborts with when the deadline passes; without it, no timer is set. */
  expired?: () => unknown;
}

export function requestDeadline(options: RequestDeadlineOptions): RequestDeadline {
  const startedAt = options.startedAt ?? performance.now();
  const { deadlineMs, expired } = options;
  const deadlineAt = startedAt + deadlineMs;
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const outer = (options.signals ?? []).filter((s): s is AbortSignal => s !== undefined);
  const relays = outer.map((s) => {
    const relay = () => controller.abort(s.reason);
    return { s, relay };
  });
  const dispose = () => {
    if (timer !== undefined) clearTimeout(timer);
    for (const { s, relay } of relays) s.removeEventListener('abort', relay);
  };
  for (const { s, relay } of relays) {
    if (controller.signal.aborted) break;
    if (s.aborted) relay();
    else s.addEventListener('abort', relay, { once: true });
  }
  if (controller.signal.aborted) dispose();
  else if (expired !== undefined && Number.isFinite(deadlineMs)) {
    timer = setTimeout(
      () => {
        timedOut = true;
        controller.abort(expired());
        dispose();
      },
      Math.max(0, deadlineAt - performance.now()),
    );
  }
  return {
    startedAt,
    deadlineMs,
    deadlineAt,
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    remainingMs: () => Math.max(1, Math.floor(deadlineAt - performance.now())),
    dispose,
  };
}
