/**
 * The farm capabilities of a lease: shell commands (one answer, or its output streamed), the lease's
 * logcat, and the apps under test (installed, listed, launched, stopped, cleared, uninstalled). A
 * stream is an operation of the lease until it ends, so teardown ends it (cancelled through the
 * lease's signal, waited for like every running operation); an installed app is journaled in the
 * store before the install, so teardown uninstalls it on whichever node runs it.
 */
import { requestDeadline } from '../adb/deadline.ts';
import { sha256File } from '../artifacts/hash.ts';
import { BridgeError } from '../errors.ts';
import { storedApk } from '../helpers/apk-source.ts';
import {
  APP_JOURNAL_PREFIX,
  clearApp,
  installApp,
  type LeaseApp,
  launchApp,
  stopApp,
  uninstallApp,
} from '../helpers/farm/apps.ts';
import { LOGCAT_COMMAND, type LogcatFilter, logcatNdjson } from '../helpers/farm/logcat-stream.ts';
import { runShell, type ShellInput, type ShellRun, shellLine } from '../helpers/farm/shell.ts';
import { STREAM_HELD_BYTES, shellEventStream } from '../helpers/farm/shell-events.ts';
import { ShellGate } from '../helpers/farm/shell-gate.ts';
import type { LeaseTarget } from './scope.ts';
import type { LeaseSessions } from './session.ts';

export class FarmCapability {
  readonly #sessions: LeaseSessions;
  /** Shell commands on this node: per lease, per tenant, and the output they may hold together. */
  readonly shellGate: ShellGate;

  constructor(sessions: LeaseSessions, shellGate = new ShellGate()) {
    this.#sessions = sessions;
    this.shellGate = shellGate;
  }

  /**
   * One shell command on the lease's device, cancelled when the lease ends (farm/shell.ts); refused
   * (429) when the lease, the tenant or the node's output budget has no room (farm/shell-gate.ts).
   */
  async shell(lease: LeaseTarget, tenant: string, input: ShellInput, run: ShellRun) {
    shellLine(input); // a malformed command is a 400, whatever the load
    const done = this.shellGate.admit({ leaseId: lease.id, tenant, holdsBytes: 2 * run.maxOutputBytes });
    try {
      return await this.#shell(lease, input, {
        ...run,
        pace: (bytes) => this.shellGate.pace(tenant, bytes),
      });
    } finally {
      done();
    }
  }

  #shell(lease: LeaseTarget, input: ShellInput, run: ShellRun) {
    return this.#sessions.operate(lease, async (_session, leaseSignal) => {
      // runShell bounds itself by run.timeoutMs; the signal carries the request's and the lease's cancellation.
      const deadline = requestDeadline({ deadlineMs: Infinity, signals: [run.signal, leaseSignal] });
      try {
        return await runShell(this.#sessions.options.adb.client, lease.serial, input, {
          ...run,
          signal: deadline.signal,
        });
      } finally {
        deadline.dispose();
      }
    });
  }

  /**
   * Run `open` as an operation of the lease that lasts until the stream it resolves ends (`ended`):
   * resolves the stream once it is open, rejects when opening fails.
   */
  #stream(
    lease: LeaseTarget,
    open: (signal: AbortSignal) => Promise<{ stream: ReadableStream<Uint8Array>; ended: Promise<void> }>,
  ): Promise<ReadableStream<Uint8Array>> {
    return new Promise((resolve, reject) => {
      let started = false;
      this.#sessions
        .operate(lease, async (_session, signal) => {
          const { stream, ended } = await open(signal);
          started = true;
          resolve(stream);
          await ended;
        })
        .catch((err: unknown) => {
          if (!started) reject(err);
        });
    });
  }

  /**
   * One shell command whose output streams as NDJSON events (farm/shell-events.ts) at the reader's
   * pace; teardown closes it (LEASE_EXPIRED event).
   */
  async shellEvents(
    lease: LeaseTarget,
    tenant: string,
    input: ShellInput,
    run: { timeoutMs: number },
  ): Promise<ReadableStream<Uint8Array>> {
    const line = shellLine(input);
    // A streamed command holds at most STREAM_HELD_BYTES here (the reader's pace pauses the device
    // past that): it counts per lease, per tenant and that much against the node's output budget,
    // and its output draws from the tenant's pace. Its place is free when the stream ends.
    const done = this.shellGate.admit({ leaseId: lease.id, tenant, holdsBytes: STREAM_HELD_BYTES });
    try {
      return await this.#stream(lease, async (signal) => {
        const shell = await this.#sessions.options.adb.client.shellStream(lease.serial, line, {
          signal,
          timeoutMs: run.timeoutMs,
        });
        let end!: () => void;
        const ended = new Promise<void>((resolve) => {
          end = resolve;
        }).finally(done);
        const stream = shellEventStream(shell, {
          timeoutMs: run.timeoutMs,
          signal,
          onEnd: end,
          pace: (bytes) => this.shellGate.pace(tenant, bytes),
        });
        return { stream, ended };
      });
    } catch (err) {
      done();
      throw err;
    }
  }

  /** The lease's logcat as an NDJSON stream; teardown (release, expiry, fencing loss) ends it. */
  logcat(lease: LeaseTarget, filter: LogcatFilter): Promise<ReadableStream<Uint8Array>> {
    return this.#stream(lease, async (signal) => {
      const shell = await this.#sessions.options.adb.client.shellStream(lease.serial, LOGCAT_COMMAND, {
        signal,
      });
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
      return { stream: logcatNdjson(shell, filter), ended };
    });
  }

  /**
   * Install an app under test: an uploaded file (with the sha256 its upload computed while writing it,
   * or hashed here; then taken into the artifact cache) or
   * an artifact of this bridge's store by sha256; journaled for teardown, which uninstalls it unless
   * the install asked to `keep` it or the lease `keepApps` (then teardown records it as kept).
   */
  installApp(
    lease: LeaseTarget,
    source: { file: string; sha256?: string } | { sha256: string },
    options: { installArgs?: readonly string[]; keep?: boolean } = {},
  ): Promise<LeaseApp> {
    const o = this.#sessions.options;
    return this.#sessions.operate(lease, async (_session, signal) => {
      let apk: { path: string; sha256: string };
      if ('file' in source) {
        // An upload was hashed while it was written; another file is hashed here (streamed).
        const sha256 = source.sha256 ?? (await sha256File(source.file)).sha256;
        apk = { path: (await o.cache.importFile(source.file, sha256)).path, sha256 };
      } else {
        const path = await storedApk(o.cache, o.store, source.sha256);
        if (path === null)
          throw new BridgeError('NOT_FOUND', `no artifact with sha256 ${source.sha256} on this bridge`);
        apk = { path, sha256: source.sha256 };
      }
      const journal = o.journal;
      const keep = options.keep === true || lease.keepApps === true;
      const app = await installApp(this.#sessions.device(lease.serial), apk, {
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
      const apps = this.#sessions.apps.get(lease.id) ?? new Map<string, LeaseApp>();
      apps.set(app.packageName, app);
      this.#sessions.apps.set(lease.id, apps);
      return app;
    });
  }

  /**
   * The apps installed during the lease: through the API on this node, and (with the reset between
   * tenants) every other package added to the device since its baseline — through the lease's adb
   * endpoint — which the lease's end removes like the others.
   */
  async apps(lease: LeaseTarget): Promise<Array<LeaseApp & { source: 'api' | 'adb' }>> {
    const viaApi = [...(this.#sessions.apps.get(lease.id)?.values() ?? [])].map((a) => ({
      ...a,
      source: 'api' as const,
    }));
    const resets = this.#sessions.options.resets;
    if (resets === undefined) return viaApi;
    const known = new Set(viaApi.map((a) => a.packageName));
    const added = await this.#sessions.operate(lease, () => resets.added(lease.deviceId, lease.serial));
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
    return this.#sessions.operate(lease, async (_session, signal) => {
      const device = this.#sessions.device(lease.serial);
      const done = { packageName, action, component: null as string | null };
      if (action === 'launch')
        return { ...done, component: (await launchApp(device, packageName, component, signal)).component };
      if (action === 'stop') await stopApp(device, packageName, signal);
      else if (action === 'clear') await clearApp(device, packageName, signal);
      else {
        await uninstallApp(device, packageName, signal);
        this.#sessions.apps.get(lease.id)?.delete(packageName);
      }
      return done;
    });
  }
}
