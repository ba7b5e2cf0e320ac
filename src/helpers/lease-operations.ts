/**
 * The one owner-aware entry point for helper operations on leased devices. Every call names the
 * lease and its fencing token; the token is checked against the lease store before the device is
 * touched, so a client whose lease expired cannot act on the device's next holder. Per-lease helper
 * drivers (and their persistent sessions) are node-local caches that teardown closes.
 */
import type { AdbRuntime } from '../adb/runtime.ts';
import type { ArtifactCache } from '../artifacts/cache.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { BridgeError } from '../errors.ts';
import type { HelperManifest } from '../manifest/index.ts';
import type { Logger } from '../observability/logger.ts';
import type { ReleaseRepository } from '../releases/repository.ts';
import { apkSource } from './apk-source.ts';
import type { TouchPlan } from './protocol/touch-plan.ts';
import { adbHelperDevice } from './snapshot/device.ts';
import { type DriverRequest, SnapshotDriver } from './snapshot/driver.ts';
import { type EnsurePolicy, EnsureVerdicts } from './snapshot/ensure-helper.ts';

export const SNAPSHOT_HELPER = 'android-snapshot-helper';

/** The lease facts an operation needs. */
export interface LeaseRef {
  id: string;
  deviceId: string;
  fencingToken: number;
}

export interface LeaseOperationsOptions {
  adb: AdbRuntime;
  releases: ReleaseRepository;
  store: ArtifactStore;
  cache: ArtifactCache;
  /** Resolve a device id to the adb serial this node uses for it. */
  serialOf: (deviceId: string) => Promise<string>;
  /** Told after a successful ensure (device registry's helper status). */
  onEnsured?: (deviceId: string, helperName: string, manifest: HelperManifest) => Promise<void>;
  /** Throws unless the lease is the device's active lease with this token. */
  checkFence: (deviceId: string, leaseId: string, fencingToken: number) => Promise<unknown>;
  logger?: Logger;
}

export class LeaseOperations {
  readonly #o: LeaseOperationsOptions;
  readonly #verdicts = new EnsureVerdicts();
  readonly #drivers = new Map<string, Map<string, SnapshotDriver>>();

  constructor(options: LeaseOperationsOptions) {
    this.#o = options;
  }

  get verdicts(): EnsureVerdicts {
    return this.#verdicts;
  }

  async #manifest(name: string): Promise<HelperManifest> {
    const manifest = await this.#o.releases.getLatestManifest(name);
    if (manifest === null)
      throw new BridgeError('NOT_FOUND', `helper ${name} has no published release on this bridge`);
    return manifest;
  }

  async #driver(lease: LeaseRef, name: string): Promise<SnapshotDriver> {
    await this.#o.checkFence(lease.deviceId, lease.id, lease.fencingToken);
    const serial = await this.#o.serialOf(lease.deviceId);
    const manifest = await this.#manifest(name);
    let perLease = this.#drivers.get(lease.id);
    if (!perLease) {
      perLease = new Map();
      this.#drivers.set(lease.id, perLease);
    }
    const existing = perLease.get(name);
    if (existing && existing.manifest.sha256 === manifest.sha256) return existing;
    await existing?.close();
    const device = adbHelperDevice({
      client: this.#o.adb.client,
      serial,
      ledger: this.#o.adb.ledger,
      locks: this.#o.adb.locks,
    });
    const driver = new SnapshotDriver(device, manifest, {
      verdicts: this.#verdicts,
      apk: apkSource(this.#o.cache, this.#o.store, manifest),
      owner: lease.id,
    });
    perLease.set(name, driver);
    return driver;
  }

  async ensure(lease: LeaseRef, name: string, policy: EnsurePolicy = 'missing-or-outdated') {
    const driver = await this.#driver(lease, name);
    const result = await driver.ensure(policy);
    if (result.action !== 'none' || result.before === 'current') {
      await this.#o
        .onEnsured?.(lease.deviceId, name, driver.manifest)
        .catch((err: Error) =>
          this.#o.logger?.warn(
            { err: err.message, deviceId: lease.deviceId },
            'recording helper status failed',
          ),
        );
    }
    return result;
  }

  /** Snapshot helper operations ensure the helper first (a warm ensure is one round trip). */
  async #ready(lease: LeaseRef): Promise<SnapshotDriver> {
    const driver = await this.#driver(lease, SNAPSHOT_HELPER);
    await driver.ensure();
    return driver;
  }

  async snapshot(lease: LeaseRef, request: DriverRequest) {
    return (await this.#ready(lease)).snapshot(request);
  }

  async viewport(lease: LeaseRef, request: DriverRequest) {
    return (await this.#ready(lease)).viewport(request);
  }

  async gesture(lease: LeaseRef, plan: TouchPlan | unknown, request: DriverRequest) {
    return (await this.#ready(lease)).gesture(plan, request);
  }

  /** Teardown of a lease's helper state on this node: sessions, then every forward it created. */
  async closeLease(leaseId: string): Promise<{ actions: string[]; failures: string[] }> {
    const actions: string[] = [];
    const failures: string[] = [];
    const perLease = this.#drivers.get(leaseId);
    this.#drivers.delete(leaseId);
    for (const [name, driver] of perLease ?? []) {
      try {
        const hadSession = driver.sessionAlive;
        await driver.close();
        if (hadSession) actions.push(`closed ${name} session`);
      } catch (err) {
        failures.push(`closing ${name} session: ${(err as Error).message}`);
      }
    }
    const report = await this.#o.adb.ledger.release(leaseId);
    for (const f of report.removed) actions.push(`removed forward ${f.local} -> ${f.remote} on ${f.serial}`);
    for (const f of report.failed)
      failures.push(`removing forward ${f.local} -> ${f.remote} on ${f.serial}: ${f.error}`);
    return { actions, failures };
  }

  async close(): Promise<void> {
    for (const id of [...this.#drivers.keys()]) await this.closeLease(id);
  }
}
