/** The lease lookup and body limits shared by the lease routes (one file per route in this folder). */
import type { Context } from 'hono';
import type { Lease as LeaseBody } from '../../../api/index.ts';
import type { Caller, DeviceSide, LeaseScope } from '../../../app/index.ts';
import type { Lease } from '../../../leases/types.ts';
import type { AppEnv } from '../../env.ts';
import { assertRole } from '../../middleware/auth.ts';
import { requireDevices } from '../devices.ts';

/** Body limits of the lease routes (gestures carry touch plans; the rest a few fields). */
export const SMALL_BODY_BYTES = 16 * 1024;
export const GESTURE_BODY_BYTES = 256 * 1024;

/** A lease as the API shows it. */
export function view(lease: Lease): LeaseBody {
  return lease;
}

/** The caller (any token; admins see every tenant) and the device side's use cases. */
export function useCases(c: Context<AppEnv>): { caller: Caller; side: DeviceSide } {
  const caller = assertRole(c.get('principal'), 'client');
  return { caller, side: requireDevices(c.get('services')) };
}

/** The caller's `X-Fencing-Token`, when given. */
export const fencingTokenOf = (c: Context<AppEnv>): string | undefined => c.req.header('x-fencing-token');

/** Log the rest of the request with the lease and its device. */
export function logLease(c: Context<AppEnv>, lease: Lease): void {
  c.set('logger', c.get('logger').child({ leaseId: lease.id, deviceId: lease.deviceId }));
}

/**
 * The scope of a lease-scoped helper call: the one the route's guard resolved (lease read once,
 * tenancy and fencing checked, owner found), else resolved here. Other tenants get 404 (not 403);
 * ended leases and stale fencing tokens 410.
 */
export async function scopeFor(
  c: Context<AppEnv>,
  id: string,
): Promise<{ side: DeviceSide; scope: LeaseScope }> {
  const { caller, side } = useCases(c);
  const scope = await (c.get('leaseScope') ??
    side.scopes.open(caller, id, { fencingToken: fencingTokenOf(c), locate: false }));
  logLease(c, scope.lease);
  return { side, scope };
}
