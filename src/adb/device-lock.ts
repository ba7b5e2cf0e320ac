/**
 * Per-device serialisation: mutating operations (install, uninstall, settings) run one at a time
 * per device; reads run concurrently but never during a mutation. Writers are not starved: a
 * waiting writer holds back new readers. Process-local (one bridge node owns a device).
 *
 * Deadlines: a caller's deadline (`timeoutMs` from the call, and/or its `signal`) covers waiting
 * and holding. A waiter whose deadline passes leaves the queue with TIMEOUT; a holder whose deadline
 * passes releases the lock at once, its promise rejects with TIMEOUT and the signal its work got is
 * aborted (so the work cancels its I/O). Without a deadline of its own a holder is bounded by
 * `maxHoldMs` (default 10 minutes): a lock is never held forever.
 *
 * Exclusive locks of a resource on a device (`withExclusive`: the instrumentation of one package,
 * of which Android runs one at a time) are apart from the device's read/write lock. Their deadline
 * bounds the wait only: the holder keeps the lock until its work settles (bounded by `maxHoldMs`),
 * so the cleanup of a run (a force-stop) always ends before the next run starts.
 */
import { BridgeError } from '../errors.ts';
import type { Deadline } from './deadline.ts';

interface Waiter {
  write: boolean;
  wake: () => void;
}

interface State {
  readers: number;
  writer: boolean;
  queue: Waiter[];
}

export interface DeviceLocksOptions {
  /** Longest a holder without a deadline of its own keeps the lock (default 10 minutes). */
  maxHoldMs?: number;
}

export const DEFAULT_MAX_HOLD_MS = 10 * 60_000;

export class DeviceLocks {
  readonly #states = new Map<string, State>();
  readonly #maxHoldMs: number;

  constructor(options: DeviceLocksOptions = {}) {
    this.#maxHoldMs = options.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
  }

  #state(key: string): State {
    let s = this.#states.get(key);
    if (!s) {
      s = { readers: 0, writer: false, queue: [] };
      this.#states.set(key, s);
    }
    return s;
  }

  #pump(key: string, s: State): void {
    while (s.queue.length > 0) {
      const next = s.queue[0]!;
      if (next.write) {
        if (s.writer || s.readers > 0) return;
        s.queue.shift();
        s.writer = true;
        next.wake();
        return;
      }
      if (s.writer) return;
      s.queue.shift();
      s.readers += 1;
      next.wake();
    }
    if (!s.writer && s.readers === 0 && this.#states.get(key) === s) this.#states.delete(key);
  }

  async #run<T>(
    key: string,
    write: boolean,
    fn: (signal: AbortSignal) => Promise<T>,
    deadline: Deadline,
    lock: { serial: string; kind: string; waitOnly?: boolean } = {
      serial: key,
      kind: write ? 'write' : 'read',
    },
  ): Promise<T> {
    const controller = new AbortController();
    const timeoutMs = deadline.timeoutMs;
    const name = lock.kind === 'read' || lock.kind === 'write' ? 'device lock' : `${lock.kind} lock`;
    const expired = () =>
      new BridgeError(
        'TIMEOUT',
        deadline.signal?.aborted
          ? `${name} of ${lock.serial}: the operation was aborted`
          : `${name} of ${lock.serial}: the operation's deadline of ${timeoutMs ?? this.#maxHoldMs} ms passed`,
        { details: { serial: lock.serial, lock: lock.kind } },
      );

    const s = this.#state(key);
    let held = false;
    let released = false;
    const release = () => {
      if (released || !held) return;
      released = true;
      if (write) s.writer = false;
      else s.readers -= 1;
      this.#pump(key, s);
    };

    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let holdTimer: NodeJS.Timeout | undefined;
      const cleanup = () => {
        clearTimeout(callTimer);
        clearTimeout(holdTimer);
        deadline.signal?.removeEventListener('abort', onDeadline);
      };
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        cleanup();
        outcome();
      };
      const waiter: Waiter = {
        write,
        wake: () => {
          held = true;
          if (timeoutMs === undefined || lock.waitOnly)
            holdTimer = setTimeout(onHoldExpired, this.#maxHoldMs);
          let work: Promise<T>;
          try {
            work = fn(controller.signal);
          } catch (err) {
            work = Promise.reject(err);
          }
          work.then(
            (value) => settle(() => resolve(value)),
            (err: unknown) => settle(() => reject(err)),
          );
          // The lock is released when the work settles, or earlier when the deadline passes.
          work.then(release, release);
        },
      };
      function onHoldExpired(): void {
        if (settled) return;
        controller.abort();
        settle(() => reject(expired()));
      }
      function onDeadline(): void {
        if (settled) return;
        if (held && lock.waitOnly) return; // the holder's work bounds itself
        if (!held) {
          const i = s.queue.indexOf(waiter);
          if (i >= 0) s.queue.splice(i, 1);
        }
        controller.abort();
        settle(() => reject(expired()));
      }
      const callTimer =
        timeoutMs !== undefined && timeoutMs > 0 ? setTimeout(onDeadline, timeoutMs) : undefined;
      if (deadline.signal?.aborted) {
        settle(() => reject(expired()));
        return;
      }
      deadline.signal?.addEventListener('abort', onDeadline, { once: true });
      s.queue.push(waiter);
      this.#pump(key, s);
    }).finally(() => {
      // A holder whose deadline passed gives the lock up now, not when its work finally ends.
      if (controller.signal.aborted) release();
    });
  }

  withRead<T>(serial: string, fn: (signal: AbortSignal) => Promise<T>, deadline: Deadline = {}): Promise<T> {
    return this.#run(serial, false, fn, deadline);
  }

  withWrite<T>(serial: string, fn: (signal: AbortSignal) => Promise<T>, deadline: Deadline = {}): Promise<T> {
    return this.#run(serial, true, fn, deadline);
  }

  /**
   * One holder at a time of `resource` on the device (e.g. `instrumentation:PKG`), independent of the
   * device's read/write lock. `wait` bounds the wait only; the holder keeps the lock until `fn` settles.
   */
  withExclusive<T>(
    serial: string,
    resource: string,
    fn: (signal: AbortSignal) => Promise<T>,
    wait: Deadline = {},
  ): Promise<T> {
    return this.#run(`${serial}\u0000${resource}`, true, fn, wait, {
      serial,
      kind: resource,
      waitOnly: true,
    });
  }
}
