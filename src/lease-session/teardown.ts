/**
 * A lease's teardown on the node that drives its device, in this order: refuse new operations,
 * cancel the running ones (their AbortSignal) and wait for them (bounded); close what the lease
 * opened, last opened first (its session's resource list: helper sessions, glass companions, adb
 * endpoints), each close bounded and recorded; remove every forward the lease created (the forward
 * ledger); restore what the helpers journaled in the store (the a11y service's secure settings, the
 * apps installed during the lease), so it runs on whichever node tears down; then reset the device
 * to its baseline. Each step's lines are the teardown record's `actions` and `failures`.
 */
import { describeLocal } from '../adb/forward-target.ts';
import { APP_JOURNAL_PREFIX, parseAppJournalRecord, uninstallApp } from '../helpers/farm/apps.ts';
import {
  A11Y_STATE_KEY,
  type A11ySettingsRecord,
  ACCESSIBILITY_ENABLED,
  ENABLED_SERVICES,
  GlassA11y,
  parseA11ySettingsRecord,
} from '../helpers/glass/a11y-driver.ts';
import { installedSha256 } from '../helpers/snapshot/ensure-helper.ts';
import type { Closed } from './resources.ts';
import type { LeaseTarget } from './scope.ts';
import { type LeaseSessions, leaseEnded } from './session.ts';

export class Teardown {
  readonly #sessions: LeaseSessions;

  constructor(sessions: LeaseSessions) {
    this.#sessions = sessions;
  }

  /**
   * Whether nothing of the lease is on this node: no session (running operations, open resources),
   * no app list, no adb endpoint, no forward in the ledger — so that `closeLease` would only read the
   * device-state journal (which the store checks itself). When so, the lease is held closing until
   * the returned function is called: its new operations wait, and are refused when `ended` is true.
   * null (no hold) when something of the lease is here.
   */
  holdEmpty(leaseId: string): ((ended: boolean) => void) | null {
    const s = this.#sessions;
    if (
      s.options.resets !== undefined ||
      s.closing.has(leaseId) ||
      s.has(leaseId) ||
      s.apps.has(leaseId) ||
      (s.options.endpoints?.list(leaseId).length ?? 0) > 0 ||
      s.options.adb.ledger.holds(leaseId)
    ) {
      return null;
    }
    let settle!: (ended: boolean) => void;
    s.closing.set(
      leaseId,
      new Promise<boolean>((resolve) => {
        settle = resolve;
      }),
    );
    return (ended) => {
      s.closing.delete(leaseId);
      settle(ended);
    };
  }

  /** Tear the lease down on this node (see the module's comment for the steps). */
  async closeLease(lease: string | { id: string; deviceId?: string }): Promise<Closed> {
    const leaseId = typeof lease === 'string' ? lease : lease.id;
    const deviceId = typeof lease === 'string' ? undefined : lease.deviceId;
    const record: Closed = { actions: [], failures: [] };
    const { actions, failures } = record;
    const o = this.#sessions.options;
    const session = this.#sessions.get(leaseId);
    const waitMs = this.#sessions.teardownWaitMs;
    if (session) {
      session.ending = true;
      session.controller.abort(leaseEnded(leaseId));
      if (session.running.size > 0) {
        const count = session.running.size;
        let timer: NodeJS.Timeout | undefined;
        const settled = await Promise.race([
          Promise.allSettled([...session.running]).then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), waitMs);
          }),
        ]);
        clearTimeout(timer);
        if (settled) actions.push(`cancelled ${count} running operation(s)`);
        else
          failures.push(`${session.running.size} operation(s) still running ${waitMs} ms after cancellation`);
      }
      await session.resources.close(waitMs, record);
      this.#sessions.drop(leaseId, session);
    }
    const report = await o.adb.ledger.release(leaseId);
    for (const f of report.removed)
      actions.push(`removed forward ${describeLocal(f.local)} -> ${f.remote} on ${f.serial}`);
    for (const f of report.failed)
      failures.push(`removing forward ${describeLocal(f.local)} -> ${f.remote} on ${f.serial}: ${f.error}`);
    const kept = await this.#restoreDeviceState(leaseId, record);
    if (o.resets !== undefined && deviceId !== undefined) {
      const reset = await o.resets.reset({ id: leaseId, deviceId }, kept);
      actions.push(...reset.actions, `reset: ${reset.roundTrips} adb round trips`);
      failures.push(...reset.failures);
    }
    return record;
  }

  /**
   * Stop what the lease's helpers left running and put back the secure settings the a11y service
   * changed, while the lease goes on (the doctor's last step): the same closes as teardown's (the
   * helper resources: snapshot helper sessions, glass companions) and the same journaled record and
   * restore. The rest of the journal (apps installed during the lease) stays in place for teardown.
   * The lease's next calls start sessions and companions again. `restored`: the prior
   * settings put back (null when the a11y service had not been enabled during the lease).
   */
  stopHelpers(lease: LeaseTarget): Promise<Closed & { restored: A11ySettingsRecord | null }> {
    return this.#sessions.operate(lease, async (session) => {
      const record: Closed = { actions: [], failures: [] };
      await session.resources.close(this.#sessions.teardownWaitMs, record, 'helpers');
      const journal = this.#sessions.options.journal;
      if (journal === undefined) return { ...record, restored: null };
      // Only the a11y record: the rest (apps installed during the lease) never leaves the store, so a
      // teardown running meanwhile still finds it.
      const a11y = (await journal.takeDeviceState(lease.id, [A11Y_STATE_KEY]))[A11Y_STATE_KEY];
      if (a11y !== undefined) await this.#restoreA11ySettings(lease.id, a11y, record);
      return { ...record, restored: a11y === undefined ? null : parseA11ySettingsRecord(a11y) };
    });
  }

  /**
   * Restore what the lease's helpers journaled (taken from the store, so it happens once). A
   * restore that fails is journaled again, for the next attempt, and reported as a failure (the
   * device is quarantined until someone looks). Resolves the apps kept on the device (by package).
   */
  async #restoreDeviceState(leaseId: string, record: Closed): Promise<Map<string, string>> {
    const kept = new Map<string, string>();
    const journal = this.#sessions.options.journal;
    if (journal === undefined) return kept;
    let state: Record<string, Record<string, unknown>>;
    try {
      state = await journal.takeDeviceState(leaseId);
    } catch (err) {
      record.failures.push(`reading the device-state journal: ${(err as Error).message}`);
      return kept;
    }
    this.#sessions.apps.delete(leaseId);
    for (const [key, value] of Object.entries(state)) {
      if (key.startsWith(APP_JOURNAL_PREFIX)) {
        const app = parseAppJournalRecord(value);
        if (app?.keep) kept.set(app.packageName, app.sha256);
        await this.#uninstallLeaseApp(leaseId, key, value, record);
        continue;
      }
      if (key !== A11Y_STATE_KEY) {
        record.failures.push(`device-state journal: no restorer for ${JSON.stringify(key)}`);
        continue;
      }
      await this.#restoreA11ySettings(leaseId, value, record);
    }
    return kept;
  }

  /** Put back the secure settings the a11y service changed, from its journaled record. */
  async #restoreA11ySettings(leaseId: string, value: Record<string, unknown>, record: Closed): Promise<void> {
    const settings = parseA11ySettingsRecord(value);
    if (settings === null) {
      record.failures.push('device-state journal: the glass a11y record is malformed; settings not restored');
      return;
    }
    try {
      await GlassA11y.restore(this.#sessions.device(settings.serial), settings);
      record.actions.push(
        `restored secure settings ${ENABLED_SERVICES}, ${ACCESSIBILITY_ENABLED} on ${settings.serial}`,
      );
    } catch (err) {
      record.failures.push(`restoring secure settings on ${settings.serial}: ${(err as Error).message}`);
      await this.#sessions.options.journal
        ?.saveDeviceState(leaseId, A11Y_STATE_KEY, value)
        .catch(() => undefined);
    }
  }

  /** Uninstall an app the lease installed (journaled again when it fails). */
  async #uninstallLeaseApp(
    leaseId: string,
    key: string,
    value: Record<string, unknown>,
    record: Closed,
  ): Promise<void> {
    const { actions, failures } = record;
    const app = parseAppJournalRecord(value);
    if (app === null) {
      failures.push(`device-state journal: the app record ${JSON.stringify(key)} is malformed`);
      return;
    }
    if (app.keep) {
      actions.push(
        `kept app ${app.packageName} (installed during the lease, asked to keep) on ${app.serial}`,
      );
      return;
    }
    const device = this.#sessions.device(app.serial);
    try {
      // Journaled before the install: when the install failed (a signer conflict with the package
      // already there) or someone replaced it since, the package on the device is not the lease's.
      const installed = await installedSha256(device, app.packageName);
      if (installed !== app.sha256) {
        actions.push(
          installed === null
            ? `app ${app.packageName} was already uninstalled on ${app.serial}`
            : `app ${app.packageName} on ${app.serial} is not the APK the lease installed: left as it is`,
        );
        return;
      }
      await uninstallApp(device, app.packageName);
      actions.push(`uninstalled app ${app.packageName} (installed during the lease) on ${app.serial}`);
    } catch (err) {
      const message = (err as Error).message;
      // Already gone (the client uninstalled it): nothing to undo.
      const still = await installedSha256(device, app.packageName).catch(() => 'unknown');
      if (still === null) {
        actions.push(`app ${app.packageName} was already uninstalled on ${app.serial}`);
        return;
      }
      failures.push(`uninstalling app ${app.packageName} on ${app.serial}: ${message}`);
      await this.#sessions.options.journal?.saveDeviceState(leaseId, key, value).catch(() => undefined);
    }
  }
}
