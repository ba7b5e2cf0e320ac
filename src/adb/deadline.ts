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
