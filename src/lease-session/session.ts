/**
 * The sessions of the leases whose devices this node drives: what each lease holds here (its running
 * operations, what it opened on the device as a resource list, the snapshot helper's drivers, the
 * glass companions, the apps installed through the API) and the one way an operation runs on it.
 *
 * The caller (`LeaseScopes`) has read the lease once, checked tenancy and the fencing token, and
 * resolved the adb serial; an operation checks the fence once more when it finishes, so a result
 * whose lease ended meanwhile (on any node) is answered LEASE_EXPIRED, never returned. Teardown
 * refuses new operations of the lease (LEASE_EXPIRED), cancels the running ones through their
 * AbortSignal and waits for them (bounded) before it closes what the lease opened.
 */
import type { AdbRelayEndpoints } from '../adb/relay-endpoints.ts';
import type { AdbRuntime } from '../adb/runtime.ts';
import type { ArtifactCache } from '../artifacts/cache.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { BridgeError } from '../errors.ts';
import type { DeviceResets } from '../helpers/device-resets.ts';
import type { LeaseApp } from '../helpers/farm/apps.ts';
import type { LeaseCompanions } from '../helpers/glass/companions.ts';
import { adbHelperDevice } from '../helpers/snapshot/device.ts';
import { type SnapshotDriver, withAttempts } from '../helpers/snapshot/driver.ts';
import { EnsureVerdicts } from '../helpers/snapshot/ensure-helper.ts';
import type { LeaseStore } from '../leases/types.ts';
import type { HelperManifest } from '../manifest/index.ts';
import type { Logger } from '../observability/logger.ts';
import type { ReleaseRepository } from '../releases/repository.ts';
import { Resources } from './resources.ts';
import type { LeaseTarget } from './scope.ts';
import type { OpenScreenSource, ScreenLimits } from './screen-options.ts';

/** Where ensure records the helper status it saw (the device registry). */
export interface HelperStatusSink {
  setHelperStatus(
    deviceId: string,
    name: string,
    status: { versionCode: number; version?: string; sha256: string },
  ): Promise<unknown>;
}

export interface LeaseSessionOptions {
  adb: Pick<AdbRuntime, 'client' | 'ledger' | 'locks'>;
  releases: ReleaseRepository;
  store: ArtifactStore;
  cache: ArtifactCache;
  /** The completion fence: throws unless the lease is still the device's active lease with its token. */
  fence: Pick<LeaseStore, 'checkFence'>;
  /**
   * What helpers journaled about the lease's device (the glass a11y service's prior secure
   * settings, the apps installed during the lease): teardown takes it and restores the device, on
   * whichever node runs the teardown.
   */
  journal?: Pick<LeaseStore, 'takeDeviceState' | 'saveDeviceState'>;
  /** Told after a successful ensure. */
  helperStatus?: HelperStatusSink;
  logger?: Logger;
  /** How long teardown waits for cancelled operations and for each close (default 10 s). */
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
  /**
   * Opens the live screen's device stream of a lease's device (the glass agent's encoder or
   * `screenrecord`); absent: the live screen answers UNAVAILABLE.
   */
  openScreenSource?: OpenScreenSource;
  /** The live screen's viewer cap, per-viewer queue bound and linger (defaults: `SCREEN_LIMITS`). */
  screen?: Partial<ScreenLimits>;
}

/** What one lease holds on this node. */
export interface LeaseSession {
  readonly controller: AbortController;
  ending: boolean;
  readonly running: Set<Promise<unknown>>;
  /** What the lease opened on its device, closed by teardown in reverse order. */
  readonly resources: Resources;
  /** The snapshot helper's drivers (by helper name), each registered in `resources`. */
  readonly drivers: Map<string, { driver: SnapshotDriver; forget: () => void }>;
  /** The lease's glass companions, once an operation needed one. */
  companions: LeaseCompanions | null;
}

export function leaseEnded(leaseId: string): BridgeError {
  return new BridgeError('LEASE_EXPIRED', `lease ${leaseId} has ended`, {
    details: { leaseId },
  });
}

export class LeaseSessions {
  readonly options: LeaseSessionOptions;
  /** Which helper installs were verified on which device (shared by every lease's drivers). */
  readonly verdicts = new EnsureVerdicts();
  readonly #leases = new Map<string, LeaseSession>();
  /** Apps installed during each lease through this node (the list; the journal drives teardown). */
  readonly apps = new Map<string, Map<string, LeaseApp>>();
  /**
   * Leases held closing by `holdEmpty` (a one-step release in flight): their new operations wait for
   * the outcome, true when the lease ended.
   */
  readonly closing = new Map<string, Promise<boolean>>();
  /** Devices (by serial) whose cleanup after a takeover runs: their operations wait for it. */
  readonly takeovers = new Map<string, Promise<unknown>>();

  constructor(options: LeaseSessionOptions) {
    this.options = options;
  }

  get teardownWaitMs(): number {
    return this.options.teardownWaitMs ?? 10_000;
  }

  /** The lease's session on this node, if it holds anything here. */
  get(leaseId: string): LeaseSession | undefined {
    return this.#leases.get(leaseId);
  }

  has(leaseId: string): boolean {
    return this.#leases.has(leaseId);
  }

  /** Forget the session (teardown closed it). */
  drop(leaseId: string, session: LeaseSession): void {
    if (this.#leases.get(leaseId) === session) this.#leases.delete(leaseId);
  }

  /** The leases with sessions or operations on this node. */
  leaseIds(): string[] {
    return [...this.#leases.keys()];
  }

  /** The device as the helpers see it (adb, the forward ledger, the device's locks). */
  device(serial: string) {
    const { client, ledger, locks } = this.options.adb;
    return adbHelperDevice({ client, serial, ledger, locks });
  }

  async manifest(name: string): Promise<HelperManifest> {
    const manifest = await this.options.releases.getLatestManifest(name);
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
  async operate<T>(
    lease: LeaseTarget,
    fn: (session: LeaseSession, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    // A one-step release of this lease is in flight: wait for it (refused when it ended the lease).
    const closing = this.closing.get(lease.id);
    if (closing !== undefined && (await closing)) throw leaseEnded(lease.id);
    let session = this.#leases.get(lease.id);
    if (session?.ending) throw leaseEnded(lease.id);
    if (!session) {
      session = {
        controller: new AbortController(),
        ending: false,
        running: new Set(),
        resources: new Resources(),
        drivers: new Map(),
        companions: null,
      };
      this.#leases.set(lease.id, session);
    }
    const own = session;
    const work = (async () => {
      // A device just taken over: what the dead node left running is stopped before anything starts.
      const takeover = this.takeovers.get(lease.serial);
      if (takeover !== undefined) await takeover;
      if (own.ending) throw leaseEnded(lease.id);
      const value = await fn(own, own.controller.signal);
      if (own.ending) throw leaseEnded(lease.id);
      // The lease may have been released (by any node) while the operation ran.
      await this.options.fence.checkFence(lease.deviceId, lease.id, lease.fencingToken);
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
      // Nothing running and nothing open: the lease holds nothing here any more.
      if (!own.ending && own.running.size === 0 && own.resources.size === 0) this.drop(lease.id, own);
    }
  }
}
