/**
 * The one entry point of a lease-scoped call: read the lease ONCE, check tenancy, state and the
 * caller's fencing token against that read, and resolve the device's owner ONCE (one device read,
 * and the owner's URL when the call may be forwarded). The answer says whether the call runs here
 * (with the adb serial) or on the owner node; nothing downstream reads the lease again before the
 * device is touched (the operation checks the fence once more only to refuse a result whose lease
 * ended while it ran).
 */
import type { NodeDirectory } from '../devices/nodes.ts';
import type { DeviceStore } from '../devices/types.ts';
import { BridgeError } from '../errors.ts';
import type { Lease, LeaseStore } from '../leases/types.ts';

/** The lease facts an operation needs. */
export interface LeaseRef {
  id: string;
  deviceId: string;
  fencingToken: number;
  /** The lease keeps the apps installed during it (teardown leaves them, recorded as kept). */
  keepApps?: boolean;
}

/** A lease's device on this node: the lease facts and the adb serial this node uses for it. */
export interface LeaseTarget extends LeaseRef {
  serial: string;
}

/** Who calls: a token's name, tenant and role (admins see every tenant). */
export interface Caller {
  name: string;
  tenant: string;
  role: 'admin' | 'client';
}

/** Where a lease-scoped call runs. */
export type Owner =
  /** This node drives the device. */
  | { kind: 'local'; serial: string }
  /** Another node does; `url` when the call may be forwarded there and the node is known. */
  | { kind: 'remote'; node: string; url: string | null }
  /** The lease's device has no record (removed). */
  | { kind: 'unknown' };

export interface LeaseScope {
  lease: Lease;
  ref: LeaseRef;
  owner: Owner;
}

export interface LeaseScopesOptions {
  leases: Pick<LeaseStore, 'get'>;
  devices: Pick<DeviceStore, 'get'>;
  /** This node's name. */
  node: string;
  nodes: Pick<NodeDirectory, 'urlOf'>;
}

export interface OpenOptions {
  /** Refuse an ended lease (LEASE_EXPIRED); default true. */
  active?: boolean;
  /** The caller's `X-Fencing-Token`, when given: must be the lease's token. */
  fencingToken?: string | undefined;
}

export function refOf(lease: Lease): LeaseRef {
  return {
    id: lease.id,
    deviceId: lease.deviceId,
    fencingToken: lease.fencingToken,
    ...(lease.keepApps ? { keepApps: true } : {}),
  };
}

export class LeaseScopes {
  readonly #o: LeaseScopesOptions;

  constructor(options: LeaseScopesOptions) {
    this.#o = options;
  }

  get node(): string {
    return this.#o.node;
  }

  /** The caller's lease, read once: other tenants get NOT_FOUND (never 403); ended leases LEASE_EXPIRED. */
  async lease(caller: Caller, id: string, options: OpenOptions = {}): Promise<Lease> {
    const lease = await this.#o.leases.get(id);
    if (lease === null || (caller.role !== 'admin' && lease.tenant !== caller.tenant)) {
      throw new BridgeError('NOT_FOUND', `no lease ${id}`);
    }
    if ((options.active ?? true) && lease.state !== 'active') {
      throw new BridgeError('LEASE_EXPIRED', `lease ${id} is ${lease.state}`, {
        details: { state: lease.state },
      });
    }
    const token = options.fencingToken;
    if (token !== undefined && token !== String(lease.fencingToken)) {
      throw new BridgeError(
        'LEASE_EXPIRED',
        `fencing token ${token} is stale (the device was leased again)`,
        {
          details: { fencingToken: token },
        },
      );
    }
    return lease;
  }

  /**
   * The caller's active lease and where its device is driven. `locate`: look up a remote owner's
   * URL (false for a call that was already forwarded once: it is never forwarded again).
   */
  async open(
    caller: Caller,
    id: string,
    options: OpenOptions & { locate?: boolean } = {},
  ): Promise<LeaseScope> {
    const lease = await this.lease(caller, id, { ...options, active: true });
    const record = await this.#o.devices.get(lease.deviceId);
    let owner: Owner;
    if (record === null) owner = { kind: 'unknown' };
    else if (record.ownerNode === this.#o.node) owner = { kind: 'local', serial: record.serial };
    else {
      const url = options.locate ? await this.#o.nodes.urlOf(record.ownerNode) : null;
      owner = { kind: 'remote', node: record.ownerNode, url };
    }
    return { lease, ref: refOf(lease), owner };
  }

  /** The scope as a target on this node, or why it cannot run here. */
  local(scope: LeaseScope): LeaseTarget {
    const { owner, ref } = scope;
    if (owner.kind === 'local') return { ...ref, serial: owner.serial };
    if (owner.kind === 'unknown') {
      throw new BridgeError('NOT_FOUND', `device ${JSON.stringify(ref.deviceId)} not found`, {
        details: { deviceId: ref.deviceId },
      });
    }
    // One node holds a device's adb connection; the owner could not be reached through forwarding.
    throw new BridgeError(
      'UNAVAILABLE',
      `device ${ref.deviceId} is driven by bridge node ${owner.node}, which is not answering; retry later`,
      { details: { ownerNode: owner.node, node: this.#o.node } },
    );
  }
}
