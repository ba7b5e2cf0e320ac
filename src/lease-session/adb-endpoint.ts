/**
 * The lease's adb endpoint (remote adb): opened for a client key on the node that drives the device,
 * a resource of the lease's session that teardown closes. An endpoint whose lease ended while it
 * opened is closed again (LEASE_EXPIRED); it refuses new connections and streams once the fence fails.
 */
import type { AdbPublicKey } from '../adb/adb-public-key.ts';
import type { OpenEndpoint } from '../adb/relay-endpoints.ts';
import { BridgeError } from '../errors.ts';
import type { LeaseTarget } from './scope.ts';
import type { LeaseSessions } from './session.ts';

const ADB_ENDPOINTS = 'adb endpoints';

export class AdbEndpointCapability {
  readonly #sessions: LeaseSessions;

  constructor(sessions: LeaseSessions) {
    this.#sessions = sessions;
  }

  /**
   * Open (or answer the open) adb endpoint of the lease for the client key `key`; with `quota`, a new
   * one only while the tenant has fewer than `limit` open on this node (429 naming the quota).
   */
  async open(
    lease: LeaseTarget,
    key: AdbPublicKey,
    quota?: { tenant: string; limit: number },
  ): Promise<OpenEndpoint> {
    const { endpoints, fence } = this.#sessions.options;
    if (endpoints === undefined)
      throw new BridgeError('UNAVAILABLE', 'this bridge node does not offer adb endpoints');
    const alive = () =>
      fence.checkFence(lease.deviceId, lease.id, lease.fencingToken).then(
        () => true,
        (err: unknown) => {
          if (err instanceof BridgeError && err.code !== 'UNAVAILABLE' && err.code !== 'TIMEOUT')
            return false;
          throw err;
        },
      );
    try {
      return await this.#sessions.operate(lease, async (session) => {
        const opened = await endpoints.open({
          owner: lease.id,
          serial: lease.serial,
          deviceId: lease.deviceId,
          key,
          alive,
          ...(quota === undefined ? {} : { quota }),
        });
        // One resource for the lease's endpoints: closing it closes every one (its lines say which).
        if (!session.resources.has(ADB_ENDPOINTS))
          session.resources.add(ADB_ENDPOINTS, async () => ({ actions: await endpoints.close(lease.id) }));
        return opened;
      });
    } catch (err) {
      if (err instanceof BridgeError && err.code === 'LEASE_EXPIRED') await endpoints.close(lease.id);
      throw err;
    }
  }
}
