/**
 * The glass a11y service on one device (the glass contract): enabled in secure settings and restored
 * afterwards, even by another process after a crash.
 *
 * Enabling reads `enabled_accessibility_services` and `accessibility_enabled`, hands the prior
 * values to a durable journal (the lease store) BEFORE changing anything, appends the service's
 * component (`:`-separated, never twice), sets `accessibility_enabled` to 1, and waits for the
 * service: a `ping` answered through a forward to `localabstract:<socketName>`, polled every 150 ms
 * up to 6 s (not a `tree`: with the screen off or the keyguard up no window is active and a bound
 * service refuses every tree), up to 3 attempts with a rebind (the component taken out of the list and put back).
 * Restoring puts each prior value back, or deletes the setting when it had none: `settings put …
 * ""` fails on devices. Restoring needs only the journal's record, not the enabling process.
 *
 * Installing the APK is ensure's job (same installArgs allowlist, sha256, signer pin, policies).
 */
import { shellCommand } from '../../adb/shell-quote.ts';
import { BridgeError } from '../../errors.ts';
import type { LeaseStore } from '../../leases/types.ts';
import type { AccessibilityServiceManifest } from '../../manifest/index.ts';
import { resolveComponent } from '../../protocol/android/java-names.ts';
import { type Attempt, attemptOutcome } from '../attempt.ts';
import type { HelperDevice } from '../snapshot/device.ts';
import { GlassEndpoint, type GlassLineClient, type StartFailure } from './line-client.ts';

export const ENABLED_SERVICES = 'enabled_accessibility_services';
export const ACCESSIBILITY_ENABLED = 'accessibility_enabled';

/** The prior values of the secure settings the service changes (null: the setting did not exist). */
export interface A11ySettingsRecord {
  serial: string;
  [ENABLED_SERVICES]: string | null;
  [ACCESSIBILITY_ENABLED]: string | null;
}

/** Where prior settings are kept until restored (the lease store: it survives a bridge crash). */
export interface SettingsJournal {
  save(record: A11ySettingsRecord): Promise<void>;
}

/** The key of the a11y service's record in a lease's device-state journal. */
export const A11Y_STATE_KEY = 'glass-a11y';

/** A journal in the lease store, under the lease (teardown takes it with `takeDeviceState`). */
export function leaseSettingsJournal(
  store: Pick<LeaseStore, 'saveDeviceState'>,
  leaseId: string,
): SettingsJournal {
  return { save: (record) => store.saveDeviceState(leaseId, A11Y_STATE_KEY, { ...record }) };
}

/** A journaled record read back from a store (outside input): the record, or null when malformed. */
export function parseA11ySettingsRecord(value: unknown): A11ySettingsRecord | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  const text = (x: unknown): x is string | null => x === null || typeof x === 'string';
  if (typeof v['serial'] !== 'string' || v['serial'] === '') return null;
  if (!text(v[ENABLED_SERVICES]) || !text(v[ACCESSIBILITY_ENABLED])) return null;
  return {
    serial: v['serial'],
    [ENABLED_SERVICES]: v[ENABLED_SERVICES],
    [ACCESSIBILITY_ENABLED]: v[ACCESSIBILITY_ENABLED],
  };
}

export interface A11yEnableOptions {
  device: HelperDevice;
  manifest: AccessibilityServiceManifest;
  journal: SettingsJournal;
  /** Forward owner in the ledger (the lease id). */
  owner: string;
  pollMs?: number;
  readyTimeoutMs?: number;
  attempts?: number;
}

/** `pkg/.Cls` and `pkg/pkg.Cls` name the same component: compare them resolved (`pkg/Cls` is class `Cls`). */
function sameComponent(a: string, b: string): boolean {
  try {
    const x = resolveComponent(a);
    const y = resolveComponent(b);
    return x.packageName === y.packageName && x.className === y.className;
  } catch {
    return a === b;
  }
}

/** `settings get`: the value, or null for a setting that does not exist (printed as "null"). */
export async function readSecureSetting(device: HelperDevice, key: string): Promise<string | null> {
  const r = await device.shell(shellCommand('settings', 'get', 'secure', key), { timeoutMs: 10_000 });
  if (r.exitCode !== 0) {
    throw new BridgeError('HELPER_FAILED', `settings get secure ${key} failed on ${device.serial}`, {
      details: { serial: device.serial, stderr: r.stderr.toString('utf8').slice(0, 300) },
    });
  }
  const value = r.stdout.toString('utf8').replace(/\r?\n$/, '');
  return value === 'null' ? null : value;
}

async function writeSecureSetting(device: HelperDevice, key: string, value: string | null): Promise<void> {
  // An empty or absent prior value is restored by deleting: `settings put … ""` fails on devices.
  const command =
    value === null || value === ''
      ? shellCommand('settings', 'delete', 'secure', key)
      : shellCommand('settings', 'put', 'secure', key, value);
  const r = await device.shell(command, { timeoutMs: 10_000 });
  if (r.exitCode !== 0) {
    throw new BridgeError('HELPER_FAILED', `${command} failed on ${device.serial}`, {
      details: { serial: device.serial, stderr: r.stderr.toString('utf8').slice(0, 300) },
    });
  }
}

/** The enabled list with `component` appended once (empty entries dropped). */
export function withComponent(list: string | null, component: string): string {
  const entries = (list ?? '').split(':').filter((e) => e.trim() !== '');
  if (entries.some((e) => sameComponent(e, component))) return entries.join(':');
  return [...entries, component].join(':');
}

/** The enabled list without `component`. */
export function withoutComponent(list: string | null, component: string): string {
  return (list ?? '')
    .split(':')
    .filter((e) => e.trim() !== '' && !sameComponent(e, component))
    .join(':');
}

export class GlassA11y {
  readonly #o: A11yEnableOptions;
  readonly #endpoint: GlassEndpoint;
  #client: GlassLineClient | null = null;

  private constructor(options: A11yEnableOptions) {
    this.#o = options;
    this.#endpoint = new GlassEndpoint(
      options.device,
      options.owner,
      options.manifest.socketName,
      'glass-a11y',
    );
  }

  /** Journal the prior settings, enable the service and wait until it answers a ping. */
  static async enable(
    options: A11yEnableOptions,
  ): Promise<{ a11y: GlassA11y; prior: A11ySettingsRecord; attempts: number }> {
    const { device, manifest, journal } = options;
    const prior: A11ySettingsRecord = {
      serial: device.serial,
      [ENABLED_SERVICES]: await readSecureSetting(device, ENABLED_SERVICES),
      [ACCESSIBILITY_ENABLED]: await readSecureSetting(device, ACCESSIBILITY_ENABLED),
    };
    await journal.save(prior);
    const a11y = new GlassA11y(options);
    const component = manifest.serviceComponent;
    const enabled = withComponent(prior[ENABLED_SERVICES], component);
    const max = options.attempts ?? 3;
    let last: unknown;
    /** Whether the last attempt failed writing the settings (not waiting for the service). */
    let settingsFailed = false;
    const tried: Attempt[] = [];
    for (let attempt = 1; attempt <= max; attempt++) {
      const started = performance.now();
      const failed = (err: unknown): void => {
        last = err;
        tried.push({
          transport: 'glass-a11y',
          outcome: attemptOutcome(err),
          ms: Math.round((performance.now() - started) * 100) / 100,
        });
      };
      try {
        if (attempt > 1) {
          // Rebind: the service is unbound when its component leaves the list, bound when it returns.
          await writeSecureSetting(device, ENABLED_SERVICES, withoutComponent(enabled, component));
        }
        await writeSecureSetting(device, ENABLED_SERVICES, enabled);
        await writeSecureSetting(device, ACCESSIBILITY_ENABLED, '1');
      } catch (err) {
        failed(err);
        settingsFailed = true;
        continue;
      }
      try {
        await a11y.#connect();
        return { a11y, prior, attempts: attempt };
      } catch (err) {
        failed(err);
        settingsFailed = false;
      }
    }
    await a11y.close();
    // Only a service that never answered is the device's doing; a failed settings write (the adb
    // server went away, say) is passed on as it is.
    if (settingsFailed) throw last;
    const why = last instanceof Error ? last.message : String(last);
    throw new BridgeError(
      'UNAVAILABLE',
      `the glass a11y service did not come up on ${device.serial} after ${max} attempts: ${why}`,
      {
        details: {
          serial: device.serial,
          attempts: tried,
          startFailure: 'never-bound' satisfies StartFailure,
        },
      },
    );
  }

  /** Put the journaled prior values back (or delete what did not exist). Needs no enabling process. */
  static async restore(device: HelperDevice, prior: A11ySettingsRecord): Promise<void> {
    await writeSecureSetting(device, ENABLED_SERVICES, prior[ENABLED_SERVICES]);
    await writeSecureSetting(device, ACCESSIBILITY_ENABLED, prior[ACCESSIBILITY_ENABLED]);
  }

  /** One request on the service's connection (`tree`, `action`). */
  request(op: string, fields: Record<string, unknown> = {}) {
    if (this.#client === null || this.#client.closed) {
      throw new BridgeError('UNAVAILABLE', 'the glass a11y connection is closed; enable again', {
        retryable: true,
      });
    }
    return this.#client.request(op, fields);
  }

  /** Close the connection and the forward (the settings are restored separately, from the journal). */
  async close(): Promise<void> {
    this.#client?.close();
    this.#client = null;
    await this.#endpoint.close();
  }

  /**
   * Readiness: a `ping` answered, polled every 150 ms up to 6 s. A bound service answers ping
   * whatever the screen shows; `tree` fails while no window is active (screen off, keyguard up).
   */
  async #connect(): Promise<void> {
    this.#client = await this.#endpoint.connect((client) => client.request('ping', {}, { timeoutMs: 6000 }), {
      intervalMs: this.#o.pollMs ?? 150,
      totalMs: this.#o.readyTimeoutMs ?? 6000,
    });
  }
}
