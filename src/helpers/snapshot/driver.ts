/**
 * SnapshotDriver: the typed library API over one device and one helper release. Chooses the
 * transport (`auto`: the persistent session, falling back to one-shot when the session fails),
 * restarts the session when the helper identity or capture options change, and closes cleanly.
 */
import { BridgeError } from '../../errors.ts';
import type { HelperManifest } from '../../manifest/index.ts';
import type {
  GestureResultFields,
  SnapshotResultFields,
  ViewportResultFields,
} from '../protocol/helper-fields.ts';
import { encodeTouchPlanBase64, type TouchPlan, validateTouchPlan } from '../protocol/touch-plan.ts';
import { type CaptureOptionsInput, captureOptions, sameCaptureOptions } from './capture-options.ts';
import type { HelperDevice } from './device.ts';
import { type EnsurePolicy, type EnsureResult, type EnsureVerdicts, ensureHelper } from './ensure-helper.ts';
import { runOneShot } from './one-shot.ts';
import { HelperSession } from './session-client.ts';

export type Transport = 'auto' | 'session' | 'one-shot';

export interface DriverRequest {
  transport?: Transport;
  capture?: CaptureOptionsInput;
  signal?: AbortSignal;
}

interface Served {
  transport: 'session' | 'one-shot';
  /** Why `auto` fell back to one-shot, when it did. */
  fallback?: string;
  elapsedMs: number;
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

  ensure(policy: EnsurePolicy = 'missing-or-outdated', signal?: AbortSignal): Promise<EnsureResult> {
    return ensureHelper(this.#device, this.#manifest, this.#options.verdicts, {
      policy,
      apk: this.#options.apk,
      ...(signal ? { signal } : {}),
    });
  }

  async #sessionFor(capture: ReturnType<typeof captureOptions>): Promise<HelperSession> {
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
    this.#starting = HelperSession.start(this.#device, this.#manifest, {
      capture,
      ...(this.#options.owner ? { owner: this.#options.owner } : {}),
    });
    try {
      this.#session = await this.#starting;
      return this.#session;
    } finally {
      this.#starting = undefined;
    }
  }

  /** Run `viaSession`, or one-shot, per the transport; `auto` falls back on session failure. */
  #serve<T>(
    request: DriverRequest,
    viaSession: (s: HelperSession) => Promise<T>,
    viaOneShot: () => Promise<T>,
  ): Promise<{ value: T } & Served> {
    // Reads of the device run concurrently, never during an install (ensure holds the write lock).
    // The lock is never held past the request's deadline.
    return this.#device.locks.withRead(
      this.#device.serial,
      () => this.#serveUnlocked(request, viaSession, viaOneShot),
      request.signal ? { signal: request.signal } : {},
    );
  }

  async #serveUnlocked<T>(
    request: DriverRequest,
    viaSession: (s: HelperSession) => Promise<T>,
    viaOneShot: () => Promise<T>,
  ): Promise<{ value: T } & Served> {
    const transport = request.transport ?? 'auto';
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
    if (transport === 'one-shot') {
      // Starting an instrumentation of the package kills a running one (as Android does): end the
      // session cleanly first rather than leave a dead one behind.
      await this.#closeSession();
      return { value: await viaOneShot(), transport: 'one-shot', elapsedMs: elapsed() };
    }
    const capture = captureOptions(request.capture);
    try {
      const session = await this.#sessionFor(capture);
      return { value: await viaSession(session), transport: 'session', elapsedMs: elapsed() };
    } catch (err) {
      // A helper-reported failure (ok=false) is an answer, not a transport problem.
      const helperAnswer =
        err instanceof BridgeError &&
        err.code === 'HELPER_FAILED' &&
        err.details?.['errorType'] !== undefined;
      if (transport === 'session' || helperAnswer) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      await this.#closeSession();
      return { value: await viaOneShot(), transport: 'one-shot', fallback: reason, elapsedMs: elapsed() };
    }
  }

  async snapshot(request: DriverRequest = {}): Promise<SnapshotOutcome> {
    const capture = captureOptions(request.capture);
    const served = await this.#serve(
      request,
      async (s) => {
        const r = await s.request('snapshot');
        if (r.command !== 'snapshot')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', 'session answered a different command');
        return { xml: r.xml, result: r.result };
      },
      async () => {
        const r = await runOneShot(this.#device, this.#manifest, {
          mode: 'snapshot',
          capture,
          ...(request.signal ? { signal: request.signal } : {}),
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
      async (s) => {
        const r = await s.request('viewport');
        if (r.command !== 'viewport')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', 'session answered a different command');
        return r.result;
      },
      async () => {
        const r = await runOneShot(this.#device, this.#manifest, {
          mode: 'viewport',
          capture,
          ...(request.signal ? { signal: request.signal } : {}),
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
      async (s) => {
        const r = await s.request('gesture', payload, verdict.plan.durationMs + capture.timeoutMs);
        if (r.command !== 'gesture')
          throw new BridgeError('HELPER_PROTOCOL_ERROR', 'session answered a different command');
        return r.result;
      },
      async () => {
        const r = await runOneShot(this.#device, this.#manifest, {
          mode: 'gesture',
          capture: { ...capture, timeoutMs: Math.min(120_000, capture.timeoutMs + verdict.plan.durationMs) },
          payloadBase64: payload,
          ...(request.signal ? { signal: request.signal } : {}),
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

  async close(): Promise<void> {
    await this.#closeSession();
  }
}
