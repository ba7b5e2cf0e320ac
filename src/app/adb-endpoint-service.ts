/**
 * Remote adb through the bridge: the use case the `POST /v1/leases/{id}/adb` route and the CLI call.
 * The key is parsed here (INVALID_ARGUMENT naming the problem); the endpoint belongs to the lease's
 * operations on the node that drives the device, so lease teardown closes it.
 */
import { parseAdbPublicKey } from '../adb/adb-public-key.ts';
import type { AdbEndpoint } from '../api/adb-endpoint.ts';
import type { LeaseOperations } from '../helpers/lease-operations.ts';
import type { LeaseScope, LeaseScopes } from './lease-scope.ts';

export interface AdbEndpointServiceOptions {
  scopes: LeaseScopes;
  operations: Pick<LeaseOperations, 'adbEndpoint'>;
}

export class AdbEndpointService {
  readonly #o: AdbEndpointServiceOptions;

  constructor(options: AdbEndpointServiceOptions) {
    this.#o = options;
  }

  /** Open (or answer the open) endpoint of the lease for this client key. */
  async open(scope: LeaseScope, publicKey: string): Promise<AdbEndpoint> {
    const key = parseAdbPublicKey(publicKey);
    const target = this.#o.scopes.local(scope);
    const opened = await this.#o.operations.adbEndpoint(target, key);
    return {
      endpoint: opened.endpoint,
      host: opened.host,
      port: opened.port,
      serial: opened.serial,
      keyFingerprint: opened.keyFingerprint,
      leaseId: scope.lease.id,
      deviceId: scope.lease.deviceId,
    };
  }
}
