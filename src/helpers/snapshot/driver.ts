/**
 * SnapshotDriver: the typed library API over one device and one helper release. Chooses the
 * transport (`auto`: the persistent session, falling back to one-shot when the session fails),
 * restarts the session when the helper identity or capture options change, and closes cleanly.
 *
 * One deadline per request: everything a request does (session start, its command, the one-shot
 * fallback) fits in `deadlineMs` (default: the helper's `timeoutMs` plus the command slack), and the
 * answer — or the error's `details` — lists what was tried (`attempts`).
 */

import { requestDeadline } from '../../adb/deadline.ts';
import { BridgeError } from '../../errors.ts';
import type { HelperManifest } from '../../manifest/index.ts';
import type {
  GestureResultFields,
  SnapshotResultFields,
  ViewportResultFields,
} from '../../protocol/helper/helper-fields.ts';
import {
  encodeTouchPlanBase64,
  type TouchPlan,
  validateTouchPlan,
} from '../../protocol/helper/touch-plan.ts';
import type { ServedAttempt } from '../attempt.ts';
import { type CaptureOptionsInput, captureOptions, sameCaptureOptions } from './capture-options.ts';
import type { HelperDevice } from './device.ts';
import { type EnsurePolicy, type EnsureResult, type EnsureVerdicts, ensureHelper } from './ensure-helper.ts';
import { COMMAND_DEADLINE_SLACK_MS, runOneShot } from './one-shot.ts';
import { HelperSession } from './session-client.ts';

export type Transport = 'auto' | 'session' | 'one-shot';

export interface DriverRequest {
  transport?: Transport;
  capture?: CaptureOptionsInput;
  /** Cancels the request (e.g. its lease ended); the abort reason is what the caller gets. */
  signal?: AbortSignal;
  /** The whole request's budget, fallback included (default `timeoutMs` + the command slack). */
  deadlineMs?: number;
  /** When the request started (`performance.now()`), if earlier work (ensure) counts against it. */
  startedAt?: number;
}

export type { ServedAttempt } from '../attempt.ts';

interface Served {
  transport: 'session' | 'one-shot';
  /** Why `auto` fell back to one-shot, when it did. */
  fallback?: string;
  elapsedMs: number;
  attempts: ServedAttempt[];
  deadlineMs: number;
}

/** The default overall budget of a request with these capture options (and gesture duration). */
export function defaultDeadlineMs(capture: CaptureOptionsInput = {}, extraMs = 0): number {
  return captureOptions(capture).timeoutMs + extraMs + COMMAND_DEADLINE_SLACK_MS;
}

const round2 = (ms: number) => Math.round(ms * 100) / 100;
const RUNNING = 'running';

/** The same error with `attempts` (and the deadline) added to its details. */
export function withAttempts(err: unknown, attempts: ServedAttempt[], deadlineMs: number): unknown {
  if (!(err instanceof BridgeError)) return err;
  return new BridgeError(err.code, err.message, {
    retryable: err.retryable,
    details: { ...(err.details ?? {}), attempts, deadlineMs },
    cause: err.cause,
  });
}

/** A helper-reported failure (ok=false) is an answer, not a transport problem: `auto` never falls back. */
export function isHelperAnswer(err: unknown): boolean {
  return (
    err instanceof BridgeError && err.code === 'HELPER_FAILED' && err.details?.['errorType'] !== undefined
  );
}

/** A request's TIMEOUT: nothing served within its one deadline. */
export function requestTimedOut(deadlineMs: number, what = 'helper request'): BridgeError {
  return new BridgeError('TIMEOUT', `${what}: no result within the request deadline of ${deadlineMs} ms`, {
    details: { deadlineMs },
  });
}

export type SnapshotOutcome = Served & { xml: string; result: SnapshotResultFields };
export type ViewportOutcome = Served & {
  viewport: { x: number; y: number; width: number; height: number };
  result: ViewportResultFields;
};
export type GestureOutcome = Served & { result: GestureResultFields };

export interface DriverOptions {
  verdicts: EnsureVerdicts;
  /** The verified local APK for installs (artifact cache). */
  apk: () => Promise<string>;
  /** Forward-ledger owner (a lease id). */
  owner?: string;
}

export class SnapshotDriver {
  readonly #device: HelperDevice;
  readonly #manifest: HelperManifest;
  readonly #options: DriverOptions;
  #session: HelperSession | undefined;
  #starting: Promise<HelperSession> | undefined;
  #closed = false;
  /** Requests' work on the device, until it settles (a request that gave up may still clean up). */
  readonly #pending = new Set<Promise<unknown>>();
  /** Work of requests that gave up and is still running: the next request waits for it. */
  readonly #abandoned = new Set<Promise<unknown>>();

  constructor(device: HelperDevice, manifest: HelperManifest, options: DriverOptions) {
    this.#device = device;
    this.#manifest = manifest;
    this.#options = options;
  }

  get manifest(): HelperManifest {
    return this.#manifest;
  }

  get sessionAlive(): boolean {
    return this.#session?.alive ?? false;
  }

  /**
   * The helper is known good without asking the device: this driver's session (started after an ensure
   * of this manifest) is alive and the node's verdict for this device and manifest stands. Replacing or
   * removing the package kills its instrumentation, so the session would not be alive; an ensure that
   * found something else forgets the verdict.
   */
  get helperVerified(): boolean {
    return (
      this.sessionAlive &&
      this.#session?.manifest.sha256 === this.#manifest.sha256 &&
      this.#options.verdicts.has(this.#device.serial, this.#manifest)
    );
  }

  ensure(policy: EnsurePolicy = 'missing-or-outdated', signal?: AbortSignal): Promise<EnsureResult> {
    return ensureHelper(this.#device, this.#manifest, this.#options.verdicts, {
      policy,
      apk: this.#options.apk,
      ...(signal ? { signal } : {}),
    });
  }

  async #sessionFor(
    capture: ReturnType<typeof captureOptions>,
    signal: AbortSignal,
    readyTimeoutMs: number,
  ): Promise<HelperSession> {
    if (this.#closed) throw new BridgeError('UNAVAILABLE', 'the helper driver is closed');
    const current = this.#session;
    if (
      current?.alive &&
      current.manifest.sha256 === this.#manifest.sha256 &&
      sameCaptureOptions(current.capture, capture)
    ) {
      return current;
    }
    if (this.#starting) {
      const s = await this.#starting.catch(() => undefined);
      if (s?.alive && sameCaptureOptions(s.capture, capture)) return s;
    }
    if (current) {
      this.#session = undefined;
      await current.close();
    }
    const starting = HelperSession.start(this.#device, this.#manifest, {
      capture,
      signal,
      readyTimeoutMs,
      ...(this.#options.owner ? { owner: this.#options.owner } : {}),
    });
    this.#starting = starting;
    try {
      const session = await starting;
      if (this.#closed) {
        // Closed while the session was starting (its lease ended): it belongs to nobody.
        await session.close();
        throw new BridgeError('UNAVAILABLE', 'the helper driver was closed while its session started');
      }
      this.#session = session;
      return session;
    } finally {
      if (this.#starting === starting) this.#starting = undefined;
    }
  }

  /**
   * Run `viaSession`, or one-shot, per the transport; `auto` falls back on session failure. Every
   * step gets what is left of the request's deadline and its signal; past the deadline the request
   * answers TIMEOUT at once (the step still running is cancelled).
   */
  async #serve<T>(
    request: DriverRequest,
    extraMs: number,
    viaSession: (s: HelperSession, step: Step) => Promise<T>,
    viaOneShot: (step: Step) => Promise<T>,
  ): Promise<{ value: T } & Served> {
    // One signal for the request: aborted by the deadline or by the caller's signal (the lease's),
    // whichever comes first, with that one's reason.
    const deadlineMs = request.deadlineMs ?? defaultDeadlineMs(request.capture, extraMs);
    const deadline = requestDeadline({
      startedAt: request.startedAt,
      deadlineMs,
      signals: [request.signal],
      expired: () => requestTimedOut(deadlineMs),
    });
    const { signal, deadlineAt, startedAt: started } = deadline;
    const attempts: ServedAttempt[] = [];
    const onGiveUp: Array<(code: string) => void> = [];
    const gaveUp = new Promise<never>((_, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    gaveUp.catch(() => undefined);
    let inner: Promise<unknown> | undefined;
    try {
      // A request that gave up may still be stopping its helper: starting ours first would be killed.
      if (this.#abandoned.size > 0) await Promise.race([Promise.allSettled([...this.#abandoned]), gaveUp]);
      // Reads of the device run concurrently, never during an install (ensure holds the write lock).
      // The lock is never held past the request's deadline.
      const work = this.#device.locks.withRead(
        this.#device.serial,
        () => {
          const running = this.#serveUnlocked(
            request,
            { signal, deadlineAt, attempts, onGiveUp },
            viaSession,
            viaOneShot,
          );
          inner = this.#track(this.#pending, running);
          return running;
        },
        { signal },
      );
      const served = await Promise.race([work, gaveUp]);
      return { ...served, elapsedMs: round2(performance.now() - started), attempts, deadlineMs };
    } catch (err) {
      const cause = signal.aborted ? signal.reason : err;
      // An attempt still running when the request gave up ends with the request's answer.
      const code = cause instanceof BridgeError ? cause.code : 'INTERNAL';
      for (const giveUp of onGiveUp) giveUp(code);
      if (inner !== undefined && this.#pending.has(inner)) this.#track(this.#abandoned, inner);
      throw withAttempts(cause, attempts, deadlineMs);
    } finally {
      deadline.dispose();
    }
  }

  /** Keep `work` in `set` until it settles; resolves (never rejects) when it does. */
  #track(set: Set<Promise<unknown>>, work: Promise<unknown>): Promise<unknown> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    set.add(work);
    void settled.then(() => set.delete(work));
    return work;
  }

  async #serveUnlocked<T>(
    request: DriverRequest,
    step: Step & { attempts: ServedAttempt[]; onGiveUp: Array<(code: string) => void> },
    viaSession: (s: HelperSession, step: Step) => Promise<T>,
    viaOneShot: (step: Step) => Promise<T>,
  ): Promise<{ value: T; transport: 'session' | 'one-shot'; fallback?: string }> {
    const transport = request.transport ?? 'auto';
    const attempt = async <R>(kind: 'session' | 'one-shot', fn: () => Promise<R>): Promise<R> => {
      const t0 = performance.now();
      const entry: ServedAttempt = { transport: kind, outcome: RUNNING, ms: 0 };
      step.attempts.push(entry);
      const settle = (outcome: string) => {
        if (entry.outcome !== RUNNING) return; // the request already gave up and recorded it
        entry.outcome = outcome;
        entry.ms = round2(performance.now() - t0);
      };
      step.onGiveUp.push((code) => settle(code));
      try {
        const value = await fn();
        settle('ok');
        return value;
      } catch (err) {
        settle(err instanceof BridgeError ? err.code : 'INTERNAL');
        throw err;
      }
    };
    if (transport === 'one-shot') {
      // Starting an instrumentation of the package kills a running one (as Android does): end the
      // session cleanly first rather than leave a dead one behind.
      await this.#closeSession();
      return { value: await attempt('one-shot', () => viaOneShot(step)), transport: 'one-shot' };
    }
    const capture = captureOptions(request.capture);
    try {
      const value = await attempt('session', async () => {
        const session = await this.#sessionFor(capture, step.signal, remaining(step));
        return viaSession(session, step);
      });
      return { value, transport: 'session' };
    } catch (err) {
      if (transport === 'session' || isHelperAnswer(err) || step.signal.aborted) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      await this.#closeSession();
      if (this.#closed) throw err;
      return {
        value: await attempt('one-shot', () => viaOneShot(step)),
        transport: 'one-shot',
        fallback: reason,
      };
    }
  }

  async snapshot(request: DriverRequest = {}): Promise<SnapshotOutcome> {
    const capture = captureOptions(request.capture);
    const served = await this.#serve(
      request,
      0,
      async (s, step) => {
        const r = await s.request('snapshot', undefined, {
          timeoutMs: Math.min(capture.timeoutMs + 5_000, remaining(step)),
          signal: step.signal,
        });
        if (r.command !== 'snapshot')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', 'session answered a different command');
        return { xml: r.xml, result: r.result };
      },
      async (step) => {
        const r = await runOneShot(this.#device, this.#manifest, {
          mode: 'snapshot',
          capture,
          signal: step.signal,
          deadlineMs: remaining(step),
        });
        if (r.mode !== 'snapshot')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', `expected a snapshot result, got ${r.mode}`);
        return { xml: r.xml, result: r.result };
      },
    );
    const { value, ...rest } = served;
    return { ...rest, ...value };
  }

  async viewport(request: DriverRequest = {}): Promise<ViewportOutcome> {
    const capture = captureOptions(request.capture);
    const served = await this.#serve(
      request,
      0,
      async (s, step) => {
        const r = await s.request('viewport', undefined, {
          timeoutMs: Math.min(capture.timeoutMs + 5_000, remaining(step)),
          signal: step.signal,
        });
        if (r.command !== 'viewport')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', 'session answered a different command');
        return r.result;
      },
      async (step) => {
        const r = await runOneShot(this.#device, this.#manifest, {
          mode: 'viewport',
          capture,
          signal: step.signal,
          deadlineMs: remaining(step),
        });
        if (r.mode !== 'viewport')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', `expected a viewport result, got ${r.mode}`);
        return r.result;
      },
    );
    const { value, ...rest } = served;
    return {
      ...rest,
      result: value,
      viewport: { x: value.x, y: value.y, width: value.width, height: value.height },
    };
  }

  async gesture(plan: TouchPlan | unknown, request: DriverRequest = {}): Promise<GestureOutcome> {
    const verdict = validateTouchPlan(plan);
    if (!verdict.valid) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `invalid touch plan: ${verdict.errors[0]?.path}: ${verdict.errors[0]?.message}`,
        {
          details: { errors: verdict.errors },
        },
      );
    }
    const payload = encodeTouchPlanBase64(verdict.plan);
    const capture = captureOptions(request.capture);
    const served = await this.#serve(
      request,
      verdict.plan.durationMs,
      async (s, step) => {
        const r = await s.request('gesture', payload, {
          timeoutMs: Math.min(verdict.plan.durationMs + capture.timeoutMs, remaining(step)),
          signal: step.signal,
        });
        if (r.command !== 'gesture')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', 'session answered a different command');
        return r.result;
      },
      async (step) => {
        const r = await runOneShot(this.#device, this.#manifest, {
          mode: 'gesture',
          capture: { ...capture, timeoutMs: Math.min(120_000, capture.timeoutMs + verdict.plan.durationMs) },
          payloadBase64: payload,
          signal: step.signal,
          deadlineMs: remaining(step),
        });
        if (r.mode !== 'gesture')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', `expected a gesture result, got ${r.mode}`);
        return r.result;
      },
    );
    const { value, ...rest } = served;
    return { ...rest, result: value };
  }

  async #closeSession(): Promise<void> {
    const s = this.#session;
    this.#session = undefined;
    await s?.close();
  }

  /**
   * Close the session; final. Requests still running (cancel them through their signal first) are
   * waited for up to `waitMs`; a session still starting is closed when it comes up. Resolves false
   * when some request was still running after `waitMs`.
   */
  async close(waitMs = 10_000): Promise<boolean> {
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([
      Promise.allSettled([...this.#pending, ...this.#abandoned]).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), waitMs);
      }),
    ]);
    clearTimeout(timer);
    await this.#closeSession();
    return settled;
  }
}

/** What one step of a request may use: its signal and the time left. */
interface Step {
  signal: AbortSignal;
  deadlineAt: number;
}

function remaining(step: Step): number {
  return Math.max(1, Math.floor(step.deadlineAt - performance.now()));
}
