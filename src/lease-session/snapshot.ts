/**
 * The snapshot helper on a lease's device: ensure, snapshot, viewport, gestures (one-shot runs and a
 * persistent session per lease, through the helper's driver), and the screenshot (no helper).
 * A lease's driver is a resource of its session: teardown closes it (its session, its forwards).
 */

import { type RequestDeadline, requestDeadline } from '../adb/deadline.ts';
import type { AdbRuntime } from '../adb/runtime.ts';
import { BridgeError } from '../errors.ts';
import { apkSource } from '../helpers/apk-source.ts';
import { adbHelperDevice } from '../helpers/snapshot/device.ts';
import {
  type DriverRequest,
  defaultDeadlineMs,
  isHelperAnswer,
  requestTimedOut,
  type ServedAttempt,
  SnapshotDriver,
  withAttempts,
} from '../helpers/snapshot/driver.ts';
import type { EnsurePolicy, EnsureVerdicts } from '../helpers/snapshot/ensure-helper.ts';
import type { HelperManifest } from '../manifest/index.ts';
import { type PngHeader, readPngHeader } from '../protocol/helper/png-header.ts';
import type { TouchPlan } from '../protocol/helper/touch-plan.ts';
import type { LeaseTarget } from './scope.ts';
import { type LeaseSession, type LeaseSessions, leaseEnded } from './session.ts';

export const SNAPSHOT_HELPER = 'android-snapshot-helper';

/** Default deadline of a screenshot (`screencap -p` over `exec:`). */
export const SCREENSHOT_DEADLINE_MS = 20_000;

/** A screenshot: the PNG bytes as the device wrote them, its header, how long it took. */
export interface Screenshot {
  png: Buffer;
  header: PngHeader;
  elapsedMs: number;
}

/** The snapshot helper's driver for one device (a lease's session and the CLI's `device` command). */
export function openHelperDriver(options: {
  adb: Pick<AdbRuntime, 'client' | 'ledger' | 'locks'>;
  serial: string;
  manifest: HelperManifest;
  verdicts: EnsureVerdicts;
  apk: () => Promise<string>;
  /** Forward-ledger owner (a lease id). */
  owner?: string;
}): SnapshotDriver {
  const { adb, serial } = options;
  const device = adbHelperDevice({ client: adb.client, serial, ledger: adb.ledger, locks: adb.locks });
  return new SnapshotDriver(device, options.manifest, {
    verdicts: options.verdicts,
    apk: options.apk,
    ...(options.owner === undefined ? {} : { owner: options.owner }),
  });
}

/** The attempts a driver error lists (none when it lists none). */
function attemptsOf(err: unknown): ServedAttempt[] {
  const attempts = err instanceof BridgeError ? err.details?.['attempts'] : undefined;
  return Array.isArray(attempts) ? (attempts as ServedAttempt[]) : [];
}

/**
 * The one fallback rule of `auto`: after a session failure it falls back to one-shot, as the driver
 * decides — not for a helper's own answer (ok=false), not once the request was cancelled or its
 * deadline passed.
 */
function sessionFailureFallsBack(err: unknown, deadline: RequestDeadline): boolean {
  if (deadline.signal.aborted || performance.now() >= deadline.deadlineAt) return false;
  return !isHelperAnswer(err);
}

export class SnapshotCapability {
  readonly #sessions: LeaseSessions;

  constructor(sessions: LeaseSessions) {
    this.#sessions = sessions;
  }

  /** The lease's driver of helper `name` at its latest release (a newer release replaces it). */
  async #driver(lease: LeaseTarget, session: LeaseSession, name: string): Promise<SnapshotDriver> {
    const manifest = await this.#sessions.manifest(name);
    if (session.ending) throw leaseEnded(lease.id);
    const existing = session.drivers.get(name);
    if (existing && existing.driver.manifest.sha256 === manifest.sha256) return existing.driver;
    if (existing) {
      existing.forget();
      session.drivers.delete(name);
      await existing.driver.close();
    }
    const o = this.#sessions.options;
    const driver = openHelperDriver({
      adb: o.adb,
      serial: lease.serial,
      manifest,
      verdicts: this.#sessions.verdicts,
      apk: apkSource(o.cache, o.store, manifest),
      owner: lease.id,
    });
    const forget = session.resources.add(
      `${name} session`,
      async (waitMs) => {
        if (session.drivers.get(name)?.driver === driver) session.drivers.delete(name);
        const hadSession = driver.sessionAlive;
        const failures = (await driver.close(waitMs))
          ? []
          : [`${name}: a request was still running after ${waitMs} ms`];
        return { actions: hadSession ? [`closed ${name} session`] : [], failures };
      },
      { helper: true },
    );
    session.drivers.set(name, { driver, forget });
    return driver;
  }

  ensure(lease: LeaseTarget, name: string, policy: EnsurePolicy = 'missing-or-outdated') {
    return this.#sessions.operate(lease, async (session, signal) => {
      const driver = await this.#driver(lease, session, name);
      const result = await driver.ensure(policy, signal);
      if (result.action !== 'none' || result.before === 'current')
        await this.#recordStatus(lease, name, driver);
      return result;
    });
  }

  /** Tell the device registry which release of a helper the device has now (failures only logged). */
  async #recordStatus(lease: LeaseTarget, name: string, driver: SnapshotDriver): Promise<void> {
    const o = this.#sessions.options;
    await o.helperStatus
      ?.setHelperStatus(lease.deviceId, name, {
        versionCode: driver.manifest.versionCode,
        version: driver.manifest.version,
        sha256: driver.manifest.sha256,
      })
      .catch((err: Error) =>
        o.logger?.warn({ err: err.message, deviceId: lease.deviceId }, 'recording helper status failed'),
      );
  }

  /**
   * Snapshot helper operations ensure the helper first (a warm ensure is one round trip); the
   * ensure counts against the request's one deadline, made here once and handed down to the driver.
   * A request that may use the session skips it while the driver's live session vouches for the
   * helper (`helperVerified`): per snapshot that saves an adb connection, a `cmd package` run on the
   * device and the device's write lock.
   */
  #withReady<T extends { attempts: ServedAttempt[]; fallback?: string }>(
    lease: LeaseTarget,
    request: DriverRequest,
    extraMs: number,
    fn: (driver: SnapshotDriver, request: DriverRequest) => Promise<T>,
  ): Promise<T> {
    const startedAt = request.startedAt ?? performance.now();
    const deadlineMs = request.deadlineMs ?? defaultDeadlineMs(request.capture, extraMs);
    return this.#sessions.operate(lease, async (session, leaseSignal) => {
      let ensuring = false;
      const deadline = requestDeadline({
        startedAt,
        deadlineMs,
        signals: [request.signal, leaseSignal],
        expired: () =>
          ensuring
            ? new BridgeError(
                'TIMEOUT',
                `ensuring the helper took the whole request deadline of ${deadlineMs} ms`,
                { details: { deadlineMs, attempts: [] } },
              )
            : requestTimedOut(deadlineMs),
      });
      const ensure = async (driver: SnapshotDriver): Promise<void> => {
        ensuring = true;
        try {
          const ensured = await driver.ensure('missing-or-outdated', deadline.signal);
          // Installed or updated on the way: the device view names the release (a warm ensure writes nothing).
          if (ensured.action !== 'none') await this.#recordStatus(lease, SNAPSHOT_HELPER, driver);
        } catch (err) {
          if (deadline.signal.aborted) throw deadline.signal.reason;
          throw err;
        } finally {
          ensuring = false;
        }
      };
      try {
        const driver = await this.#driver(lease, session, SNAPSHOT_HELPER);
        const ready = { ...request, signal: deadline.signal, startedAt, deadlineMs };
        return await this.#ready(driver, ready, deadline, () => ensure(driver), fn);
      } finally {
        deadline.dispose();
      }
    });
  }

  /** Ensure (unless a live session vouches for the helper), then serve; `auto`'s fallback rule, once. */
  async #ready<T extends { attempts: ServedAttempt[]; fallback?: string }>(
    driver: SnapshotDriver,
    ready: DriverRequest,
    deadline: RequestDeadline,
    ensure: () => Promise<void>,
    fn: (driver: SnapshotDriver, request: DriverRequest) => Promise<T>,
  ): Promise<T> {
    if (ready.transport !== 'one-shot' && driver.helperVerified) {
      if (ready.transport === 'session') return fn(driver, ready);
      // auto, warm: the session vouched for the helper, so nothing ensured it. If the session fails
      // (the helper may be gone: uninstalled, replaced), ensure it before the one-shot fallback.
      let failure: unknown;
      try {
        return await fn(driver, { ...ready, transport: 'session' });
      } catch (err) {
        if (!sessionFailureFallsBack(err, deadline)) throw err;
        failure = err;
      }
      const tried = attemptsOf(failure);
      const reason = failure instanceof Error ? failure.message : String(failure);
      try {
        await ensure();
        const served = await fn(driver, { ...ready, transport: 'one-shot' });
        return { ...served, fallback: reason, attempts: [...tried, ...served.attempts] };
      } catch (err) {
        throw withAttempts(err, [...tried, ...attemptsOf(err)], deadline.deadlineMs);
      }
    }
    await ensure();
    return fn(driver, ready);
  }

  snapshot(lease: LeaseTarget, request: DriverRequest) {
    return this.#withReady(lease, request, 0, (d, r) => d.snapshot(r));
  }

  viewport(lease: LeaseTarget, request: DriverRequest) {
    return this.#withReady(lease, request, 0, (d, r) => d.viewport(r));
  }

  gesture(lease: LeaseTarget, plan: TouchPlan | unknown, request: DriverRequest) {
    const durationMs =
      typeof plan === 'object' &&
      plan !== null &&
      typeof (plan as { durationMs?: unknown }).durationMs === 'number'
        ? Math.max(0, (plan as { durationMs: number }).durationMs)
        : 0;
    return this.#withReady(lease, request, durationMs, (d, r) => d.gesture(plan, r));
  }

  /**
   * The screen as PNG: `screencap -p` through adb's `exec:` service (raw stdout, no pty to mangle
   * the bytes), checked to be a PNG before it is returned; no helper needed.
   */
  screenshot(lease: LeaseTarget, request: { deadlineMs?: number; signal?: AbortSignal } = {}) {
    return this.#sessions.operate(lease, async (_session, leaseSignal) => {
      const started = performance.now();
      const deadlineMs = request.deadlineMs ?? SCREENSHOT_DEADLINE_MS;
      // execOut answers the deadline itself (its TIMEOUT); the signal carries the cancellations.
      const deadline = requestDeadline({
        startedAt: started,
        deadlineMs,
        signals: [request.signal, leaseSignal],
      });
      try {
        const png = await this.#sessions.options.adb.client.execOut(lease.serial, 'screencap -p', {
          signal: deadline.signal,
          timeoutMs: deadlineMs,
        });
        const header = readPngHeader(png);
        return { png, header, elapsedMs: Math.round(performance.now() - started) } satisfies Screenshot;
      } finally {
        deadline.dispose();
      }
    });
  }
}
