/** Native promises with a deadline: every adb operation is bounded by a timeout and/or an AbortSignal. */
import { BridgeError } from '../errors.ts';

export interface Deadline {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
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
  const { signal, timeoutMs } = deadline;
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
          `${what}: ${signal?.aborted ? 'aborted' : `no answer within ${timeoutMs} ms`}`,
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
