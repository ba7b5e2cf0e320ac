/**
 * The reset between tenants for this node's devices: what teardown calls once a lease's own state is
 * closed. It finds the device's serial and baseline, works out what the bridge itself keeps on the
 * device (its helpers' published APKs and jars), runs `resetDevice`, clears the clipboard through
 * the glass agent when one is published, and records what the baseline accepted (a kept app).
 * Also answers which packages were added to a leased device outside the API (the lease's app list).
 */
import type { AdbRuntime } from '../adb/runtime.ts';
import type { ArtifactCache } from '../artifacts/cache.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import {
  type DeviceBaseline,
  PACKAGE_LIST_COMMAND,
  parsePackageList,
  summarizeBaseline,
} from '../devices/baseline.ts';
import type { ResetPolicy } from '../devices/reset-policy.ts';
import type { DeviceStore } from '../devices/types.ts';
import { isBridgeError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { ReleaseRepository } from '../releases/repository.ts';
import { type ResetResult, type ResetTarget, resetDevice } from './device-reset.ts';
import { GLASS_AGENT, LeaseCompanions } from './glass/companions.ts';
import { adbHelperDevice } from './snapshot/device.ts';
import type { EnsureVerdicts } from './snapshot/ensure-helper.ts';

export interface DeviceResetsOptions {
  adb: Pick<AdbRuntime, 'client' | 'ledger' | 'locks'>;
  devices: Pick<DeviceStore, 'get' | 'getBaseline' | 'putBaseline' | 'update'>;
  policy: ResetPolicy;
  releases: Pick<ReleaseRepository, 'listHelpers' | 'getRelease' | 'getLatestRelease'>;
  store: ArtifactStore;
  cache: ArtifactCache;
  verdicts: EnsureVerdicts;
  logger?: Logger;
  now?: () => number;
  /** Told the baseline a reset wrote (the registry keeps a copy for the devices it drives). */
  remember?: (deviceId: string, baseline: DeviceBaseline) => void;
}

/** A package added to a leased device outside the API (through its adb endpoint). */
export interface AddedPackage {
  packageName: string;
  versionCode: number | null;
}

/** Tries of the reset's clipboard clear when the agent's connection breaks (each within its deadline). */
const CLIPBOARD_ATTEMPTS = 3;

export class DeviceResets {
  readonly #o: DeviceResetsOptions;

  constructor(options: DeviceResetsOptions) {
    this.#o = options;
  }

  get policy(): ResetPolicy {
    return this.#o.policy;
  }

  #target(serial: string): ResetTarget {
    const { client } = this.#o.adb;
    return {
      serial,
      shell: (command, options) => client.shell(serial, command, options),
      forwards: async () => (await client.listForwards()).filter((f) => f.serial === serial),
      removeForward: (local) => client.removeForward(serial, local),
      reverses: () => client.listReverses(serial),
      removeReverse: (local) => client.removeReverse(serial, local),
    };
  }

  /**
   * What the bridge keeps: each published helper APK's package with the sha256s of its releases
   * (a helper installed by this bridge stays; anything else under its name goes), and the jars.
   */
  async #bridgeOwned(): Promise<{ packages: Map<string, Set<string>>; paths: Set<string> }> {
    const packages = new Map<string, Set<string>>();
    const paths = new Set<string>();
    for (const helper of await this.#o.releases.listHelpers()) {
      for (const version of helper.versions) {
        const release = await this.#o.releases.getRelease(helper.name, version).catch(() => null);
        if (release === null) continue;
        if (release.kind === 'app-process-jar') paths.add(release.devicePath);
        else {
          const sums = packages.get(release.packageName) ?? new Set<string>();
          sums.add(release.sha256);
          packages.set(release.packageName, sums);
        }
      }
    }
    return { packages, paths };
  }

  /** Clear the clipboard through a glass agent of the reset's own (null: none is published). */
  async #clearClipboard(serial: string, leaseId: string): Promise<string | null> {
    if ((await this.#o.releases.getLatestRelease(GLASS_AGENT)) === null) return null;
    const { client, ledger, locks } = this.#o.adb;
    const companions = new LeaseCompanions({
      device: adbHelperDevice({ client, serial, ledger, locks }),
      leaseId: `reset-${leaseId}`,
      releases: this.#o.releases,
      store: this.#o.store,
      cache: this.#o.cache,
      verdicts: this.#o.verdicts,
      journal: undefined,
      ...(this.#o.logger === undefined ? {} : { logger: this.#o.logger }),
    });
    try {
      // A broken connection (the agent died or stopped listening) rejects retryable, and the next
      // request starts the agent again: a moment's failure must not take the device out of the pool.
      for (let attempt = 1; ; attempt++) {
        try {
          await companions.agent('clipboard_set', { text: '' });
          break;
        } catch (err) {
          if (attempt >= CLIPBOARD_ATTEMPTS || !isBridgeError(err) || !err.retryable) throw err;
          this.#o.logger?.warn({ serial, attempt, err: err.message }, 'reset: clearing the clipboard again');
        }
      }
    } catch (err) {
      // A device that cannot run the published agent has no way to clear it here: said, not failed.
      if (isBridgeError(err) && err.code === 'COMPANION_UNSUPPORTED') {
        return `clipboard not cleared: ${err.message}`;
      }
      throw err;
    } finally {
      await companions.close();
      await ledger.release(`reset-${leaseId}`);
    }
    return 'cleared the clipboard';
  }

  /**
   * Reset the lease's device to its baseline. Never throws; a device without a baseline, or that
   * cannot be found, is a failure (the device leaves the pool).
   */
  async reset(
    lease: { id: string; deviceId: string },
    keptApps: ReadonlyMap<string, string>,
  ): Promise<ResetResult> {
    const none = (failure: string): ResetResult => ({
      actions: [],
      failures: [failure],
      roundTrips: 0,
      baseline: null,
    });
    const { deviceId } = lease;
    const record = await this.#o.devices.get(deviceId).catch(() => null);
    if (record === null) return none(`reset: device ${deviceId} has no record: it cannot be reset`);
    const baseline = await this.#o.devices.getBaseline(deviceId).catch((err: Error) => err);
    if (baseline instanceof Error)
      return none(`reset: reading the baseline of ${deviceId}: ${baseline.message}`);
    if (baseline === null) return none(`reset: device ${deviceId} has no baseline: it cannot be reset`);
    let owned: { packages: Map<string, Set<string>>; paths: Set<string> };
    try {
      owned = await this.#bridgeOwned();
    } catch (err) {
      return none(`reset: reading the published helpers: ${(err as Error).message}`);
    }
    const result = await resetDevice(this.#target(record.serial), baseline, this.#o.policy, {
      helperPackages: owned.packages,
      keepPaths: owned.paths,
      keptApps,
      clearClipboard: () => this.#clearClipboard(record.serial, lease.id),
    });
    if (result.baseline !== null) {
      const updated = { ...result.baseline, capturedAt: this.#o.now?.() ?? Date.now() };
      try {
        await this.#o.devices.putBaseline(deviceId, updated);
        this.#o.remember?.(deviceId, updated);
        await this.#o.devices.update(deviceId, (r) => ({ ...r, baseline: summarizeBaseline(updated) }));
      } catch (err) {
        result.failures.push(
          `reset: recording the updated baseline of ${deviceId}: ${(err as Error).message}`,
        );
      }
    }
    return result;
  }

  /** Packages on the device now that are neither in its baseline, the bridge's own, nor the farm's. */
  async added(deviceId: string, serial: string): Promise<AddedPackage[]> {
    const baseline = await this.#o.devices.getBaseline(deviceId);
    if (baseline === null) return [];
    const listed = await this.#o.adb.client.shell(serial, PACKAGE_LIST_COMMAND, {
      timeoutMs: 30_000,
    });
    const owned = await this.#bridgeOwned();
    return Object.entries(parsePackageList(listed.stdout.toString('utf8')))
      .filter(
        ([name, p]) =>
          (baseline.packages[name] === undefined || baseline.packages[name]?.path !== p.path) &&
          !owned.packages.has(name) &&
          !this.#o.policy.keepPackages.includes(name),
      )
      .map(([packageName, p]) => ({ packageName, versionCode: p.versionCode }))
      .sort((a, b) => (a.packageName < b.packageName ? -1 : 1));
  }
}
