/**
 * The sweep of this node's per-lease state (helper sessions, companions, adb forwards): state nobody
 * will tear down here is closed on the device. That is a lease the store no longer knows (Redis came
 * back empty), a lease that ended and whose teardown was recorded (it ran on another node), and a
 * lease whose device another node drives now (that node runs its teardown). State of an active lease
 * on a device this node drives, and of an ended lease whose teardown is still to run, is kept.
 */
import type { LeaseStore } from '../leases/types.ts';
import { type Logger, silentLogger } from '../observability/logger.ts';

export interface LeaseStateSweepOptions {
  node: string;
  store: Pick<LeaseStore, 'get' | 'getTeardown'>;
  /** This node's per-lease state (the lease-session room). */
  local: {
    leaseIds(): string[];
    closeLease(leaseId: string): Promise<{ actions: string[]; failures: string[] }>;
  };
  /** The node that drives a device (null: no record). */
  ownerOf(deviceId: string): Promise<string | null>;
  logger?: Logger;
}

/** Why the state of a lease is closed here, or null to keep it. */
async function staleBecause(options: LeaseStateSweepOptions, leaseId: string): Promise<string | null> {
  const lease = await options.store.get(leaseId);
  if (lease === null) return 'lost with the lease store';
  const owner = await options.ownerOf(lease.deviceId);
  if (owner !== null && owner !== options.node) return `its device is driven by ${owner} now`;
  if (lease.state !== 'active' && (await options.store.getTeardown(leaseId)) !== null) {
    return 'ended and torn down on another node';
  }
  return null;
}

/** One pass; resolves how many leases' state it closed. A lookup that fails keeps the state (next pass). */
export async function sweepLeaseState(options: LeaseStateSweepOptions): Promise<number> {
  const log = options.logger ?? silentLogger();
  let closed = 0;
  for (const leaseId of options.local.leaseIds()) {
    const because = await staleBecause(options, leaseId).catch(() => null);
    if (because === null) continue;
    const result = await options.local.closeLease(leaseId);
    closed++;
    log.warn({ leaseId, because, ...result }, 'lease: state left on this node closed on the device');
  }
  return closed;
}
