/**
 * Helper operations on leased devices, on the node that drives the device. The caller (the
 * application layer's `LeaseScopes`) has read the lease once, checked tenancy and the fencing token,
 * and resolved the adb serial; an operation checks the fence once more when it finishes, so a result
 * whose lease ended meanwhile (on any node) is answered LEASE_EXPIRED, never returned. Per-lease
 * helper drivers (and their persistent sessions) are node-local caches that teardown closes.
 *
 * The lease's glass companions (agent, a11y service; `glass/companions.ts`) are per-lease state
 * too: started by the first operation that needs one, stopped by teardown, whose device-state
 * journal restore puts back the secure settings the a11y service changed.
 *
 * An operation belongs to its lease: teardown (`closeLease`) refuses new operations of the lease
 * (LEASE_EXPIRED), cancels the running ones through their AbortSignal and waits for them (bounded)
 * before it closes sessions and removes forwards; an operation that finishes after its lease ended
 * answers LEASE_EXPIRED, never a result.
 */
import type { AdbPublicKey } from '../adb/adb-public-key.ts';
import { describeLocal } from '../adb/forward-target.ts';
import type { AdbRelayEndpoints, OpenEndpoint } from '../adb/relay-endpoints.ts';
import type { AdbRuntime } from '../adb/runtime.ts';
import type { ArtifactCache } from '../artifacts/cache.ts';
import { sha256File } from '../artifacts/hash.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { BridgeError } from '../errors.ts';
import type { LeaseStore } from '../leases/types.ts';
import type { HelperManifest } from '../manifest/index.ts';
import type { Logger } from '../observability/logger.ts';
import { type PngHeader, readPngHeader } from '../protocol/helper/png-header.ts';
import type { TouchPlan } from '../protocol/helper/touch-plan.ts';
import type { ReleaseRepository } from '../releases/repository.ts';
import { apkSource, storedApk } from './apk-source.ts';
import type { DeviceResets } from './device-resets.ts';
import {
  APP_JOURNAL_PREFIX,
  clearApp,
  installApp,
  type LeaseApp,
  launchApp,
  parseAppJournalRecord,
  stopApp,
  uninstallApp,
} from './farm/apps.ts';
import { LOGCAT_COMMAND, type LogcatFilter, logcatNdjson } from './farm/logcat-stream.ts';
import { runShell, type ShellInput, type ShellRun, shellLine } from './farm/shell.ts';
import { shellEventStream } from './farm/shell-events.ts';
import {
  A11Y_STATE_KEY,
  type A11ySettingsRecord,
  ACCESSIBILITY_ENABLED,
  ENABLED_SERVICES,
  GlassA11y,
  parseA11ySettingsRecord,
  readSecureSetting,
} from './glass/a11y-driver.ts';
import { stopGlassAgentProcesses } from './glass/agent-driver.ts';
import { glassAgentMainClasses, LeaseCompanions } from './glass/companions.ts';
import { adbHelperDevice } from './snapshot/device.ts';
import {
  type DriverRequest,
  defaultDeadlineMs,
  isHelperAnswer,
  type ServedAttempt,
  SnapshotDriver,
  withAttempts,
} from './snapshot/driver.ts';
import { type EnsurePolicy, EnsureVerdicts, installedSha256 } from './snapshot/ensure-helper.ts';
import { forceStop } from './snapshot/one-shot.ts';

export const SNAPSHOT_HELPER = 'android-snapshot-helper';

/** The attempts a driver error lists (none when it lists none). */
function attemptsOf(err: unknown): ServedAttempt[] {
  const attempts = err instanceof BridgeError ? err.details?.['attempts'] : undefined;
  return Array.isArray(attempts) ? (attempts as ServedAttempt[]) : [];
}

/**
 * Does `auto` fall back to one-shot after this session failure? As the driver decides: not for a
 * helper's own answer (ok=false), not once the request was cancelled or its deadline passed.
 */
function sessionFailureFallsBack(err: unknown, signal: AbortSignal, deadlineAt: number): boolean {
  if (signal.aborted || performance.now() >= deadlineAt) return false;
  return !isHelperAnswer(err);
}

/** The lease facts an operation needs. */
export interface LeaseRef {
  id: string;
  deviceId: string;
  fencingToken: number;
  /** The lease keeps the apps installed during it (teardown leaves them, recorded as kept). */
  keepApps?: boolean;
}

/** A lease's device on this node: the lease facts and the adb serial this node uses for it. */
export interface LeaseTarget extends LeaseRef {
  serial: string;
}

/** Where ensure records the helper status it saw (the device registry). */
export interface HelperStatusSink {
  setHelperStatus(
    deviceId: string,
    name: string,
    status: { versionCode: number; version?: string; sha256: string },
  ): Promise<unknown>;
}

/** Default deadline of a screenshot (`screencap -p` over `exec:`). */
export const SCREENSHOT_DEADLINE_MS = 20_000;

/** A screenshot: the PNG bytes as the device wrote them, its header, how long it took. */
export interface Screenshot {
  png: Buffer;
  header: PngHeader;
  elapsedMs: number;
}

export interface LeaseOperationsOptions {
  adb: Pick<AdbRuntime, 'client' | 'ledger' | 'locks'>;
  releases: ReleaseRepository;
  store: ArtifactStore;
  cache: ArtifactCache;
  /** The completion fence: throws unless the lease is still the device's active lease with its token. */
  fence: Pick<LeaseStore, 'checkFence'>;
  /**
   * What helpers journaled about the lease's device (the glass a11y service's prior secure
   * settings): teardown takes it and restores the device, on whichever node runs the teardown.
   */
  journal?: Pick<LeaseStore, 'takeDeviceState' | 'saveDeviceState'>;
  /** Told after a successful ensure. */
  helperStatus?: HelperStatusSink;
  logger?: Logger;
  /** How long teardown waits for cancelled operations before it reports a failure (default 10 s). */
  teardownWaitMs?: number;
  /** Readiness bounds of the glass companions (defaults: the drivers' 5 s and 6 s). */
  glass?: { agentReadyTimeoutMs?: number; a11yReadyTimeoutMs?: number };
  /** The node's lease-scoped adb endpoints (remote adb); teardown closes the lease's. */
  endpoints?: Pick<AdbRelayEndpoints, 'open' | 'close' | 'list'>;
  /**
   * The reset between tenants: the last step of every teardown that knows the lease's device puts
   * the device back to its baseline (nothing of a lease is ever "empty" then).
   */
  resets?: Pick<DeviceResets, 'reset' | 'added'>;
}

/** A lease's operations on this node. */
interface LeaseState {
  readonly controller: AbortController;
  ending: boolean;
  readonly running: Set<Promise<unknown>>;
  readonly drivers: Map<string, SnapshotDriver>;
  /** The lease's glass companions, once an operation needed one. */
  companions: LeaseCompanions | null;
}

function leaseEnded(leaseId: string): BridgeError {
  return new BridgeError('LEASE_EXPIRED', `lease ${leaseId} has ended`, {
    details: { leaseId },
  });
}

/** The snapshot helper's driver for one device (the lease operations and the CLI's `device` command). */
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

export class LeaseOperations {
  readonly #o: LeaseOperationsOptions;
  readonly #verdicts = new EnsureVerdicts();
  readonly #leases = new Map<string, LeaseState>();
  /** Apps installed during each lease through this node (the list; the journal drives teardown). */
  readonly #apps = new Map<string, Map<string, LeaseApp>>();
  /**
   * Leases held closing by `holdEmpty` (a one-step release in flight): their new operations wait for
   * the outcome, true when the lease ended.
   */
  readonly #closing = new Map<string, Promise<boolean>>();
  /** Devices (by serial) whose cleanup after a takeover runs: their operations wait for it. */
  readonly #takeovers = new Map<string, Promise<unknown>>();

  constructor(options: LeaseOperationsOptions) {
    this.#o = options;
  }

  async #manifest(name: string): Promise<HelperManifest> {
    const manifest = await this.#o.releases.getLatestManifest(name);
    if (manifest === null)
      throw new BridgeError(
        'NOT_FOUND',
        `helper ${name} has no published release on this bridge; publish one: ` +
          (name === 'android-snapshot-helper'
            ? 'bash release/build-android.sh OUT && bash release/publish-android.sh OUT --store <store>, or devicebridge release publish --apk snapshot-helper.apk --version <V> --store <store>'
            : `devicebridge release publish --apk ${name}.apk --name ${name} --version <V> --store <store>`),
        { details: { release: name } },
      );
    return manifest;
  }

  /**
   * Run `fn` as an operation of `lease`: refused once the lease is ending, cancelled (its signal)
   * when teardown starts, and answered LEASE_EXPIRED when the lease ended before it finished.
   */
  async #operate<T>(
    lease: LeaseTarget,
    fn: (state: LeaseState, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    // A one-step release of this lease is in flight: wait for it (refused when it ended the lease).
    const closing = this.#closing.get(lease.id);
    if (closing !== undefined && (await closing)) throw leaseEnded(lease.id);
    let state = this.#leases.get(lease.id);
    if (state?.ending) throw leaseEnded(lease.id);
    if (!state) {
      state = {
        controller: new AbortController(),
        ending: false,
        running: new Set(),
        drivers: new Map(),
        companions: null,
      };
      this.#leases.set(lease.id, state);
    }
    const own = state;
    const work = (async () => {
      // A device just taken over: what the dead node left running is stopped before anything starts.
      const takeover = this.#takeovers.get(lease.serial);
      if (takeover !== undefined) await takeover;
      if (own.ending) throw leaseEnded(lease.id);
      const value = await fn(own, own.controller.signal);
      if (own.ending) throw leaseEnded(lease.id);
      // The lease may have been released (by any node) while the operation ran.
      await this.#o.fence.checkFence(lease.deviceId, lease.id, lease.fencingToken);
      return value;
    })();
    own.running.add(work);
    try {
      return await work;
    } catch (err) {
      if (own.ending && !(err instanceof BridgeError && err.code === 'LEASE_EXPIRED')) {
        const ended = leaseEnded(lease.id);
        throw err instanceof BridgeError && err.details?.['attempts'] !== undefined
          ? withAttempts(ended, err.details['attempts'] as never, err.details['deadlineMs'] as number)
          : ended;
      }
      throw err;
    } finally {
      own.running.delete(work);
      if (!own.ending && own.running.size === 0 && own.drivers.size === 0 && own.companions === null) {
        if (this.#leases.get(lease.id) === own) this.#leases.delete(lease.id);
      }
    }
  }

  async #driver(lease: LeaseTarget, state: LeaseState, name: string): Promise<SnapshotDriver> {
    const manifest = await this.#manifest(name);
    if (state.ending) throw leaseEnded(lease.id);
    const perLease = state.drivers;
    const existing = perLease.get(name);
    if (existing && existing.manifest.sha256 === manifest.sha256) return existing;
    await existing?.close();
    const driver = openHelperDriver({
      adb: this.#o.adb,
      serial: lease.serial,
      manifest,
      verdicts: this.#verdicts,
      apk: apkSource(this.#o.cache, this.#o.store, manifest),
      owner: lease.id,
    });
    perLease.set(name, driver);
    return driver;
  }

  ensure(lease: LeaseTarget, name: string, policy: EnsurePolicy = 'missing-or-outdated') {
    return this.#operate(lease, async (state, signal) => {
      const driver = await this.#driver(lease, state, name);
      const result = await driver.ensure(policy, signal);
      if (result.action !== 'none' || result.before === 'current')
        await this.#recordStatus(lease, name, driver);
      return result;
    });
  }

  /** Tell the device registry which release of a helper the device has now (failures only logged). */
  async #recordStatus(lease: LeaseTarget, name: string, driver: SnapshotDriver): Promise<void> {
    await this.#o.helperStatus
      ?.setHelperStatus(lease.deviceId, name, {
        versionCode: driver.manifest.versionCode,
        version: driver.manifest.version,
        sha256: driver.manifest.sha256,
      })
      .catch((err: Error) =>
        this.#o.logger?.warn(
          { err: err.message, deviceId: lease.deviceId },
          'recording helper status failed',
        ),
      );
  }

  /**
   * Snapshot helper operations ensure the helper first (a warm ensure is one round trip); the
   * ensure counts against the request's one deadline. A request that may use the session skips it
   * while the driver's live session vouches for the helper (`helperVerified`): per snapshot that saves
   * an adb connection, a `cmd package` run on the device and the device's write lock.
   */
  #withReady<T extends { attempts: ServedAttempt[]; fallback?: string }>(
    lease: LeaseTarget,
    request: DriverRequest,
    extraMs: number,
    fn: (driver: SnapshotDriver, request: DriverRequest) => Promise<T>,
  ): Promise<T> {
    const startedAt = request.startedAt ?? performance.now();
    const deadlineMs = request.deadlineMs ?? defaultDeadlineMs(request.capture, extraMs);
    return this.#operate(lease, async (state, leaseSignal) => {
      const signal = request.signal ? AbortSignal.any([request.signal, leaseSignal]) : leaseSignal;
      const driver = await this.#driver(lease, state, SNAPSHOT_HELPER);
      const ready = { ...request, signal, startedAt, deadlineMs };
      const ensure = async (): Promise<void> => {
        const left = Math.max(1, Math.ceil(startedAt + deadlineMs - performance.now()));
        const ensureSignal = AbortSignal.any([signal, AbortSignal.timeout(left)]);
        try {
          const ensured = await driver.ensure('missing-or-outdated', ensureSignal);
          // Installed or updated on the way: the device view names the release (a warm ensure writes nothing).
          if (ensured.action !== 'none') await this.#recordStatus(lease, SNAPSHOT_HELPER, driver);
        } catch (err) {
          if (signal.aborted) throw signal.reason;
          if (ensureSignal.aborted) {
            throw new BridgeError(
              'TIMEOUT',
              `ensuring the helper took the whole request deadline of ${deadlineMs} ms`,
              {
                details: { deadlineMs, attempts: [] },
              },
            );
          }
          throw err;
        }
      };
      if (request.transport !== 'one-shot' && driver.helperVerified) {
        if (request.transport === 'session') return fn(driver, ready);
        // auto, warm: the session vouched for the helper, so nothing ensured it. If the session fails
        // (the helper may be gone: uninstalled, replaced), ensure it before the one-shot fallback.
        let failure: unknown;
        try {
          return await fn(driver, { ...ready, transport: 'session' });
        } catch (err) {
          if (!sessionFailureFallsBack(err, signal, startedAt + deadlineMs)) throw err;
          failure = err;
        }
        const tried = attemptsOf(failure);
        const reason = failure instanceof Error ? failure.message : String(failure);
        try {
          await ensure();
          const served = await fn(driver, { ...ready, transport: 'one-shot' });
          return { ...served, fallback: reason, attempts: [...tried, ...served.attempts] };
        } catch (err) {
          throw withAttempts(err, [...tried, ...attemptsOf(err)], deadlineMs);
        }
      }
      await ensure();
      return fn(driver, ready);
    });
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

  #companions(lease: LeaseTarget, state: LeaseState): LeaseCompanions {
    if (state.ending) throw leaseEnded(lease.id);
    if (state.companions) return state.companions;
    const { client, ledger, locks } = this.#o.adb;
    const companions = new LeaseCompanions({
      device: adbHelperDevice({ client, serial: lease.serial, ledger, locks }),
      leaseId: lease.id,
      releases: this.#o.releases,
      store: this.#o.store,
      cache: this.#o.cache,
      verdicts: this.#verdicts,
      journal: this.#o.journal,
      ...(this.#o.logger ? { logger: this.#o.logger } : {}),
      ...this.#o.glass,
    });
    // Teardown cancels the lease's operations: companion requests in flight fail at once.
    state.controller.signal.addEventListener('abort', () => void companions.close(), { once: true });
    state.companions = companions;
    return companions;
  }

  /** One request to the lease's glass agent (started on first use): clipboard, text, key, pointer. */
  glassAgent(lease: LeaseTarget, op: string, fields: Record<string, unknown> = {}) {
    return this.#operate(lease, (state) => this.#companions(lease, state).agent(op, fields));
  }

  /** The secure settings the glass a11y service changes, as the lease's device has them now. */
  a11ySettings(lease: LeaseTarget): Promise<[services: string | null, enabled: string | null]> {
    return this.#operate(lease, async () => {
      const device = this.#device(lease.serial);
      return [
        await readSecureSetting(device, ENABLED_SERVICES),
        await readSecureSetting(device, ACCESSIBILITY_ENABLED),
      ];
    });
  }

  /** Install the glass a11y service's APK when missing or outdated, without enabling the service. */
  ensureA11yApk(lease: LeaseTarget) {
    return this.#operate(lease, (state) => this.#companions(lease, state).ensureA11yApk());
  }

  /** The accessibility tree through the lease's glass a11y service (installed and enabled on first use). */
  a11yTree(lease: LeaseTarget, pkg: string) {
    return this.#operate(lease, (state) => this.#companions(lease, state).tree(pkg));
  }

  /** Where a click by coordinates on a node of the tree last served to this lease lands. */
  a11yTapPoint(lease: LeaseTarget, ref: number) {
    return this.#operate(lease, (state) => this.#companions(lease, state).tapPoint(ref));
  }

  /** `set_text` or `click` (ACTION_CLICK) on a node of the tree last served to this lease. */
  a11yAction(lease: LeaseTarget, ref: number, action: 'set_text' | 'click', text?: string) {
    return this.#operate(lease, (state) => this.#companions(lease, state).action(ref, action, text));
  }

  /**
   * The screen as PNG: `screencap -p` through adb's `exec:` service (raw stdout, no pty to mangle
   * the bytes), checked to be a PNG before it is returned; no helper needed.
   */
  screenshot(lease: LeaseTarget, request: { deadlineMs?: number; signal?: AbortSignal } = {}) {
    return this.#operate(lease, async (_state, leaseSignal) => {
      const started = performance.now();
      const signal = request.signal ? AbortSignal.any([request.signal, leaseSignal]) : leaseSignal;
      const png = await this.#o.adb.client.execOut(lease.serial, 'screencap -p', {
        signal,
        timeoutMs: request.deadlineMs ?? SCREENSHOT_DEADLINE_MS,
      });
      const header = readPngHeader(png);
      return { png, header, elapsedMs: Math.round(performance.now() - started) } satisfies Screenshot;
    });
  }

  /**
   * Open (or answer the open) adb endpoint of the lease for the client key `key`. An endpoint whose
   * lease ended while it opened is closed again (LEASE_EXPIRED); one whose lease ends later is
   * closed by teardown, and refuses new connections and streams once the fence fails.
   */
  async adbEndpoint(lease: LeaseTarget, key: AdbPublicKey): Promise<OpenEndpoint> {
    const endpoints = this.#o.endpoints;
    if (endpoints === undefined)
      throw new BridgeError('UNAVAILABLE', 'this bridge node does not offer adb endpoints');
    const alive = () =>
      this.#o.fence.checkFence(lease.deviceId, lease.id, lease.fencingToken).then(
        () => true,
        (err: unknown) => {
          if (err instanceof BridgeError && err.code !== 'UNAVAILABLE' && err.code !== 'TIMEOUT')
            return false;
          throw err;
        },
      );
    try {
      return await this.#operate(lease, () =>
        endpoints.open({ owner: lease.id, serial: lease.serial, deviceId: lease.deviceId, key, alive }),
      );
    } catch (err) {
      if (err instanceof BridgeError && err.code === 'LEASE_EXPIRED') await endpoints.close(lease.id);
      throw err;
    }
  }

  /** One shell command on the lease's device, cancelled when the lease ends (farm/shell.ts). */
  shell(lease: LeaseTarget, input: ShellInput, run: ShellRun) {
    return this.#operate(lease, (_state, leaseSignal) => {
      const signal = run.signal ? AbortSignal.any([run.signal, leaseSignal]) : leaseSignal;
      return runShell(this.#o.adb.client, lease.serial, input, { ...run, signal });
    });
  }

  /**
   * One shell command whose output streams as NDJSON events (farm/shell-events.ts) at the reader's
   * pace; an operation of the lease until it ends, so teardown closes it (LEASE_EXPIRED event).
   */
  shellEvents(
    lease: LeaseTarget,
    input: ShellInput,
    run: { timeoutMs: number },
  ): Promise<ReadableStream<Uint8Array>> {
    const line = shellLine(input);
    return new Promise((resolve, reject) => {
      let started = false;
      this.#operate(lease, async (_state, signal) => {
        const shell = await this.#o.adb.client.shellStream(lease.serial, line, {
          signal,
          timeoutMs: run.timeoutMs,
        });
        let end!: () => void;
        const ended = new Promise<void>((done) => {
          end = done;
        });
        started = true;
        resolve(shellEventStream(shell, { timeoutMs: run.timeoutMs, signal, onEnd: end }));
        await ended;
      }).catch((err: unknown) => {
        if (!started) reject(err);
      });
    });
  }

  /**
   * The lease's logcat as an NDJSON stream; an operation of the lease until the stream ends, so
   * teardown (release, expiry, fencing loss) ends it.
   */
  logcat(lease: LeaseTarget, filter: LogcatFilter): Promise<ReadableStream<Uint8Array>> {
    return new Promise((resolve, reject) => {
      let started = false;
      this.#operate(lease, async (_state, signal) => {
        const shell = await this.#o.adb.client.shellStream(lease.serial, LOGCAT_COMMAND, { signal });
        const ended = new Promise<void>((done) => {
          const stop = () => {
            shell.close();
            done();
          };
          signal.addEventListener('abort', stop, { once: true });
          void shell.exit.then(() => {
            signal.removeEventListener('abort', stop);
            done();
          });
        });
        started = true;
        resolve(logcatNdjson(shell, filter));
        await ended;
      }).catch((err: unknown) => {
        if (!started) reject(err);
      });
    });
  }

  #device(serial: string) {
    const { client, ledger, locks } = this.#o.adb;
    return adbHelperDevice({ client, serial, ledger, locks });
  }

  /**
   * Install an app under test: an uploaded file (hashed here, then taken into the artifact cache) or
   * an artifact of this bridge's store by sha256; journaled for teardown, which uninstalls it unless
   * the install asked to `keep` it or the lease `keepApps` (then teardown records it as kept).
   */
  installApp(
    lease: LeaseTarget,
    source: { file: string } | { sha256: string },
    options: { installArgs?: readonly string[]; keep?: boolean } = {},
  ): Promise<LeaseApp> {
    return this.#operate(lease, async (_state, signal) => {
      let apk: { path: string; sha256: string };
      if ('file' in source) {
        const { sha256 } = await sha256File(source.file);
        apk = { path: (await this.#o.cache.importFile(source.file, sha256)).path, sha256 };
      } else {
        const path = await storedApk(this.#o.cache, this.#o.store, source.sha256);
        if (path === null)
          throw new BridgeError('NOT_FOUND', `no artifact with sha256 ${source.sha256} on this bridge`);
        apk = { path, sha256: source.sha256 };
      }
      const journal = this.#o.journal;
      const keep = options.keep === true || lease.keepApps === true;
      const app = await installApp(this.#device(lease.serial), apk, {
        ...options,
        keep,
        signal,
        beforeInstall: async (packageName) => {
          if (journal === undefined) return;
          await journal.saveDeviceState(lease.id, `${APP_JOURNAL_PREFIX}${packageName}`, {
            serial: lease.serial,
            packageName,
            sha256: apk.sha256,
            keep,
          });
        },
      });
      const apps = this.#apps.get(lease.id) ?? new Map<string, LeaseApp>();
      apps.set(app.packageName, app);
      this.#apps.set(lease.id, apps);
      return app;
    });
  }

  /**
   * The apps installed during the lease: through the API on this node, and (with the reset between
   * tenants) every other package added to the device since its baseline — through the lease's adb
   * endpoint — which the lease's end removes like the others.
   */
  async apps(lease: LeaseTarget): Promise<Array<LeaseApp & { source: 'api' | 'adb' }>> {
    const viaApi = [...(this.#apps.get(lease.id)?.values() ?? [])].map((a) => ({
      ...a,
      source: 'api' as const,
    }));
    const resets = this.#o.resets;
    if (resets === undefined) return viaApi;
    const known = new Set(viaApi.map((a) => a.packageName));
    const added = await this.#operate(lease, () => resets.added(lease.deviceId, lease.serial));
    return [
      ...viaApi,
      ...added
        .filter((p) => !known.has(p.packageName))
        .map((p) => ({
          packageName: p.packageName,
          versionCode: p.versionCode ?? 0,
          versionName: null,
          sha256: null,
          installedAt: null,
          keep: false,
          source: 'adb' as const,
        })),
    ];
  }

  /** Launch, stop, clear or uninstall an app on the lease's device. */
  appAction(
    lease: LeaseTarget,
    packageName: string,
    action: 'launch' | 'stop' | 'clear' | 'uninstall',
    component?: string,
  ): Promise<{ packageName: string; action: typeof action; component: string | null }> {
    return this.#operate(lease, async (_state, signal) => {
      const device = this.#device(lease.serial);
      const done = { packageName, action, component: null as string | null };
      if (action === 'launch')
        return { ...done, component: (await launchApp(device, packageName, component, signal)).component };
      if (action === 'stop') await stopApp(device, packageName, signal);
      else if (action === 'clear') await clearApp(device, packageName, signal);
      else {
        await uninstallApp(device, packageName, signal);
        this.#apps.get(lease.id)?.delete(packageName);
      }
      return done;
    });
  }

  /**
   * Whether nothing of the lease is on this node: no operation state (running operations, helper
   * sessions, glass companions), no app list, no adb endpoint, no forward in the ledger — so that
   * `closeLease` would only read the device-state journal (which the store checks itself). When so,
   * the lease is held closing until the returned function is called: its new operations wait, and
   * are refused when `ended` is true. null (no hold) when something of the lease is here.
   */
  holdEmpty(leaseId: string): ((ended: boolean) => void) | null {
    if (
      this.#o.resets !== undefined ||
      this.#closing.has(leaseId) ||
      this.#leases.has(leaseId) ||
      this.#apps.has(leaseId) ||
      (this.#o.endpoints?.list(leaseId).length ?? 0) > 0 ||
      this.#o.adb.ledger.holds(leaseId)
    ) {
      return null;
    }
    let settle!: (ended: boolean) => void;
    this.#closing.set(
      leaseId,
      new Promise<boolean>((resolve) => {
        settle = resolve;
      }),
    );
    return (ended) => {
      this.#closing.delete(leaseId);
      settle(ended);
    };
  }

  /**
   * Teardown of a lease's helper state on this node: refuse new operations, cancel the running ones
   * and wait for them (bounded), close sessions (one still starting included), then remove every
   * forward the lease created.
   */
  async closeLease(
    lease: string | { id: string; deviceId?: string },
  ): Promise<{ actions: string[]; failures: string[] }> {
    const leaseId = typeof lease === 'string' ? lease : lease.id;
    const deviceId = typeof lease === 'string' ? undefined : lease.deviceId;
    const actions: string[] = [];
    const failures: string[] = [];
    const state = this.#leases.get(leaseId);
    const waitMs = this.#o.teardownWaitMs ?? 10_000;
    if (state) {
      state.ending = true;
      state.controller.abort(leaseEnded(leaseId));
      if (state.running.size > 0) {
        const count = state.running.size;
        let timer: NodeJS.Timeout | undefined;
        const settled = await Promise.race([
          Promise.allSettled([...state.running]).then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), waitMs);
          }),
        ]);
        clearTimeout(timer);
        if (settled) actions.push(`cancelled ${count} running operation(s)`);
        else
          failures.push(`${state.running.size} operation(s) still running ${waitMs} ms after cancellation`);
      }
    }
    if (state) await this.#closeHelpers(state, waitMs, actions, failures);
    if (state && this.#leases.get(leaseId) === state) this.#leases.delete(leaseId);
    try {
      for (const line of (await this.#o.endpoints?.close(leaseId)) ?? []) actions.push(line);
    } catch (err) {
      failures.push(`closing adb endpoints: ${(err as Error).message}`);
    }
    const report = await this.#o.adb.ledger.release(leaseId);
    for (const f of report.removed)
      actions.push(`removed forward ${describeLocal(f.local)} -> ${f.remote} on ${f.serial}`);
    for (const f of report.failed)
      failures.push(`removing forward ${describeLocal(f.local)} -> ${f.remote} on ${f.serial}: ${f.error}`);
    const kept = await this.#restoreDeviceState(leaseId, actions, failures);
    if (this.#o.resets !== undefined && deviceId !== undefined) {
      const reset = await this.#o.resets.reset({ id: leaseId, deviceId }, kept);
      actions.push(...reset.actions, `reset: ${reset.roundTrips} adb round trips`);
      failures.push(...reset.failures);
    }
    return { actions, failures };
  }

  /**
   * Close what the lease's helpers run (the snapshot helper's sessions, the glass companions) and
   * take them off the lease's state, so its next call starts them again.
   */
  async #closeHelpers(state: LeaseState, waitMs: number, actions: string[], failures: string[]) {
    for (const [name, driver] of [...state.drivers]) {
      state.drivers.delete(name);
      try {
        const hadSession = driver.sessionAlive;
        if (!(await driver.close(waitMs)))
          failures.push(`${name}: a request was still running after ${waitMs} ms`);
        if (hadSession) actions.push(`closed ${name} session`);
      } catch (err) {
        failures.push(`closing ${name} session: ${(err as Error).message}`);
      }
    }
    const companions = state.companions;
    if (companions !== null) {
      state.companions = null;
      const closed = await companions.close();
      actions.push(...closed.actions);
      failures.push(...closed.failures);
    }
  }

  /**
   * Restore what the lease's helpers journaled (taken from the store, so it happens once). A
   * restore that fails is journaled again, for the next attempt, and reported as a failure (the
   * device is quarantined until someone looks).
   */
  async #restoreDeviceState(
    leaseId: string,
    actions: string[],
    failures: string[],
  ): Promise<Map<string, string>> {
    const kept = new Map<string, string>();
    const journal = this.#o.journal;
    if (journal === undefined) return kept;
    let state: Record<string, Record<string, unknown>>;
    try {
      state = await journal.takeDeviceState(leaseId);
    } catch (err) {
      failures.push(`reading the device-state journal: ${(err as Error).message}`);
      return kept;
    }
    this.#apps.delete(leaseId);
    for (const [key, value] of Object.entries(state)) {
      if (key.startsWith(APP_JOURNAL_PREFIX)) {
        const record = parseAppJournalRecord(value);
        if (record?.keep) kept.set(record.packageName, record.sha256);
        await this.#uninstallLeaseApp(leaseId, key, value, actions, failures);
        continue;
      }
      if (key !== A11Y_STATE_KEY) {
        failures.push(`device-state journal: no restorer for ${JSON.stringify(key)}`);
        continue;
      }
      await this.#restoreA11ySettings(leaseId, value, actions, failures);
    }
    return kept;
  }

  /**
   * Put back the secure settings the a11y service changed, from its journaled record; a restore
   * that fails is journaled again (for the next attempt) and reported as a failure.
   */
  async #restoreA11ySettings(
    leaseId: string,
    value: Record<string, unknown>,
    actions: string[],
    failures: string[],
  ): Promise<void> {
    const record = parseA11ySettingsRecord(value);
    if (record === null) {
      failures.push('device-state journal: the glass a11y record is malformed; settings not restored');
      return;
    }
    try {
      await GlassA11y.restore(this.#device(record.serial), record);
      actions.push(
        `restored secure settings ${ENABLED_SERVICES}, ${ACCESSIBILITY_ENABLED} on ${record.serial}`,
      );
    } catch (err) {
      failures.push(`restoring secure settings on ${record.serial}: ${(err as Error).message}`);
      await this.#o.journal?.saveDeviceState(leaseId, A11Y_STATE_KEY, value).catch(() => undefined);
    }
  }

  /**
   * Stop what the lease's helpers left running and put back the secure settings the a11y service
   * changed, while the lease goes on (the doctor's last step): the same closes as teardown's (the
   * snapshot helper's sessions, the glass companions) and the same journaled record and restore.
   * The rest of the journal (apps installed during the lease) is journaled again at once, for
   * teardown. The lease's next calls start sessions and companions again. `restored`: the prior
   * settings put back (null when the a11y service had not been enabled during the lease).
   */
  stopHelpers(
    lease: LeaseTarget,
  ): Promise<{ actions: string[]; failures: string[]; restored: A11ySettingsRecord | null }> {
    return this.#operate(lease, async (state) => {
      const actions: string[] = [];
      const failures: string[] = [];
      await this.#closeHelpers(state, this.#o.teardownWaitMs ?? 10_000, actions, failures);
      const journal = this.#o.journal;
      if (journal === undefined) return { actions, failures, restored: null };
      const taken = await journal.takeDeviceState(lease.id);
      for (const [key, value] of Object.entries(taken)) {
        if (key !== A11Y_STATE_KEY) await journal.saveDeviceState(lease.id, key, value);
      }
      const a11y = taken[A11Y_STATE_KEY];
      if (a11y !== undefined) await this.#restoreA11ySettings(lease.id, a11y, actions, failures);
      return { actions, failures, restored: a11y === undefined ? null : parseA11ySettingsRecord(a11y) };
    });
  }

  /** Teardown: uninstall an app the lease installed (journaled again when it fails). */
  async #uninstallLeaseApp(
    leaseId: string,
    key: string,
    value: Record<string, unknown>,
    actions: string[],
    failures: string[],
  ): Promise<void> {
    const record = parseAppJournalRecord(value);
    if (record === null) {
      failures.push(`device-state journal: the app record ${JSON.stringify(key)} is malformed`);
      return;
    }
    if (record.keep) {
      actions.push(
        `kept app ${record.packageName} (installed during the lease, asked to keep) on ${record.serial}`,
      );
      return;
    }
    try {
      // Journaled before the install: when the install failed (a signer conflict with the package
      // already there) or someone replaced it since, the package on the device is not the lease's.
      const installed = await installedSha256(this.#device(record.serial), record.packageName);
      if (installed !== record.sha256) {
        actions.push(
          installed === null
            ? `app ${record.packageName} was already uninstalled on ${record.serial}`
            : `app ${record.packageName} on ${record.serial} is not the APK the lease installed: left as it is`,
        );
        return;
      }
      await uninstallApp(this.#device(record.serial), record.packageName);
      actions.push(`uninstalled app ${record.packageName} (installed during the lease) on ${record.serial}`);
    } catch (err) {
      const message = (err as Error).message;
      // Already gone (the client uninstalled it): nothing to undo.
      const still = await installedSha256(this.#device(record.serial), record.packageName).catch(
        () => 'unknown',
      );
      if (still === null) {
        actions.push(`app ${record.packageName} was already uninstalled on ${record.serial}`);
        return;
      }
      failures.push(`uninstalling app ${record.packageName} on ${record.serial}: ${message}`);
      await this.#o.journal?.saveDeviceState(leaseId, key, value).catch(() => undefined);
    }
  }

  /**
   * This node took the device over from a dead node (`from`), which may have left its leases'
   * device-side processes running (they outlive the dead node's adb connection on a real device):
   * the glass agent (`pkill -f` the main classes of all its releases, literally: the agent driver's one stop) and the
   * snapshot helper's session instrumentation (`am force-stop` its package, as a session's close
   * does). A lease that moved with the device starts what it needs again, lazily, on its next call
   * here; the device's operations wait for this cleanup. The device may still be connecting: each
   * step is retried until it answers, for up to `waitMs`. Never throws; resolves what it did.
   * Not done here: forwards live in the dead node's adb server (see the README's takeover notes).
   */
  cleanAfterTakeover(
    serial: string,
    from: string,
    waitMs = 30_000,
  ): Promise<{ actions: string[]; failures: string[] }> {
    const run = this.#cleanAfterTakeover(serial, from, waitMs);
    const barrier = run.then(
      () => undefined,
      () => undefined,
    );
    this.#takeovers.set(serial, barrier);
    void barrier.then(() => {
      if (this.#takeovers.get(serial) === barrier) this.#takeovers.delete(serial);
    });
    return run;
  }

  async #cleanAfterTakeover(
    serial: string,
    from: string,
    waitMs: number,
  ): Promise<{ actions: string[]; failures: string[] }> {
    const actions: string[] = [];
    const failures: string[] = [];
    const device = this.#device(serial);
    const until = Date.now() + waitMs;
    /** Retry `step` while the device does not answer (still connecting), until the deadline. */
    const answered = async <T>(step: () => Promise<T>): Promise<T> => {
      for (;;) {
        try {
          return await step();
        } catch (err) {
          if (Date.now() + 500 >= until) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    };
    const agentClasses = await glassAgentMainClasses(this.#o.releases).catch(() => []);
    if (agentClasses.length > 0) {
      try {
        const killed = await answered(() => stopGlassAgentProcesses(device, agentClasses, 5000));
        actions.push(
          killed
            ? `stopped a glass agent ${from} left running on ${serial}`
            : `no glass agent ${from} left was running on ${serial}`,
        );
      } catch (err) {
        failures.push(`stopping a glass agent ${from} left on ${serial}: ${(err as Error).message}`);
      }
    }
    const helper = await this.#o.releases.getLatestManifest(SNAPSHOT_HELPER).catch(() => null);
    if (helper !== null) {
      try {
        // forceStop swallows errors: ask the device once first, so a device that never answers is reported.
        await answered(() => device.shell('true', { timeoutMs: 5000 }));
        await forceStop(device, helper.packageName);
        actions.push(
          `force-stopped ${helper.packageName} (a helper session ${from} may have left) on ${serial}`,
        );
      } catch (err) {
        failures.push(`stopping the helper ${from} may have left on ${serial}: ${(err as Error).message}`);
      }
    }
    return { actions, failures };
  }

  /** The leases with sessions or operations on this node. */
  leaseIds(): string[] {
    return [...this.#leases.keys()];
  }

  /** Close every lease's sessions and forwards on this node, in parallel (a drain waits for the slowest, not the sum). */
  async close(): Promise<void> {
    await Promise.all([...this.#leases.keys()].map((id) => this.closeLease(id)));
  }
}
