/** The lease lookup and body limits shared by the lease routes (one file per route in this folder). */
import type { Context } from 'hono';
import type { Lease as LeaseBody } from '../../../api/index.ts';
import { BridgeError } from '../../../errors.ts';
import type { LeaseRef } from '../../../helpers/lease-operations.ts';
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

/** The caller's lease: other tenants get 404 (not 403); ended leases 410. */
export async function leaseFor(
  c: Context<AppEnv>,
  id: string,
  options: { active?: boolean } = {},
): Promise<Lease> {
  const principal = assertRole(c.get('principal'), 'client');
  const manager = c.var.services.leases;
  requireDevices(c.var.services);
  const lease = await manager!.get(id);
  if (lease === null || (principal.role !== 'admin' && lease.tenant !== principal.tenant)) {
    throw new BridgeError('NOT_FOUND', `no lease ${id}`);
  }
  if ((options.active ?? true) && lease.state !== 'active') {
    throw new BridgeError('LEASE_EXPIRED', `lease ${id} is ${lease.state}`, {
      details: { state: lease.state },
    });
  }
  const token = c.req.header('x-fencing-token');
  if (token !== undefined && token !== String(lease.fencingToken)) {
    throw new BridgeError('LEASE_EXPIRED', `fencing token ${token} is stale (the device was leased again)`, {
      details: { fencingToken: token },
    });
  }
  c.set('logger', c.var.logger.child({ leaseId: lease.id, deviceId: lease.deviceId }));
  return lease;
}

export function ref(lease: Lease): LeaseRef {
  return { id: lease.id, deviceId: lease.deviceId, fencingToken: lease.fencingToken };
}
