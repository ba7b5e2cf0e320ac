/**
 * The lease-session room: what a lease can do on the device this node drives, and its teardown.
 * `LeaseScopes` (scope.ts) resolves a lease-scoped call once (lease read, tenancy, fencing, owner);
 * the room runs it on the lease's session (session.ts: running operations, the resource list,
 * the journal), one capability per file — the snapshot helper and screenshots (snapshot.ts), the
 * glass companions (glass.ts), the live screen (screen.ts), shell, logcat and apps (farm.ts),
 * remote adb (adb-endpoint.ts) — and tears the lease down (teardown.ts: the resource list closed in reverse, forwards, the journal's
 * restores, the device reset). Built once per node by the composition root; routes, the CLI and the
 * app layer call its capabilities, the lease manager its teardown.
 */
import { AdbEndpointCapability } from './adb-endpoint.ts';
import { FarmCapability } from './farm.ts';
import { GlassCapability } from './glass.ts';
import type { Closed } from './resources.ts';
import { deviceScreenSource, ScreenCapability } from './screen.ts';
import { type LeaseSessionOptions, LeaseSessions } from './session.ts';
import { SnapshotCapability } from './snapshot.ts';
import { cleanAfterTakeover } from './takeover.ts';
import { Teardown } from './teardown.ts';

export { type Closed, Resources } from './resources.ts';
export {
  type Caller,
  type LeaseRef,
  type LeaseScope,
  LeaseScopes,
  type LeaseTarget,
  type Owner,
  refOf,
} from './scope.ts';
export {
  type OpenScreenSource,
  SCREEN_LIMITS,
  type ScreenInput,
  type ScreenLimits,
  type ScreenViewer,
  type ScreenViewerSink,
} from './screen.ts';
export type { HelperStatusSink, LeaseSessionOptions } from './session.ts';
export { openHelperDriver, SCREENSHOT_DEADLINE_MS, type Screenshot, SNAPSHOT_HELPER } from './snapshot.ts';

export class LeaseRoom {
  readonly #sessions: LeaseSessions;
  readonly snapshot: SnapshotCapability;
  readonly glass: GlassCapability;
  readonly farm: FarmCapability;
  readonly adb: AdbEndpointCapability;
  readonly screen: ScreenCapability;
  readonly teardown: Teardown;

  constructor(options: LeaseSessionOptions) {
    this.#sessions = new LeaseSessions(options);
    this.snapshot = new SnapshotCapability(this.#sessions);
    this.glass = new GlassCapability(this.#sessions);
    this.farm = new FarmCapability(this.#sessions);
    this.adb = new AdbEndpointCapability(this.#sessions);
    this.screen = new ScreenCapability(this.#sessions, this.glass, {
      open: options.openScreenSource ?? deviceScreenSource(this.#sessions),
      limits: options.screen,
    });
    this.teardown = new Teardown(this.#sessions);
  }

  /** Tear a lease down on this node (the lease manager's and the sweep's call). */
  closeLease(lease: string | { id: string; deviceId?: string }): Promise<Closed> {
    return this.teardown.closeLease(lease);
  }

  /** Hold a lease that left nothing here closing (a one-step release); null when it left something. */
  holdEmpty(leaseId: string): ((ended: boolean) => void) | null {
    return this.teardown.holdEmpty(leaseId);
  }

  /** Stop what a dead node's leases left running on a device this node took over. */
  cleanAfterTakeover(serial: string, from: string, waitMs?: number): Promise<Closed> {
    return cleanAfterTakeover(this.#sessions, serial, from, waitMs);
  }

  /** The leases with sessions or operations on this node. */
  leaseIds(): string[] {
    return this.#sessions.leaseIds();
  }

  /** Tear down every lease's session on this node, in parallel (a drain waits for the slowest, not the sum). */
  async close(): Promise<void> {
    await Promise.all(this.#sessions.leaseIds().map((id) => this.closeLease(id)));
  }
}
