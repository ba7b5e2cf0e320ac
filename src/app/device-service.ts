/**
 * Device use cases (list, register, remove, clear a quarantine) and the one device view: a record
 * with whether it is leased, and the lease id only for the lease's tenant and admins.
 */
import type { Device } from '../api/devices.ts';
import type { NodeDirectory } from '../devices/nodes.ts';
import type { DeviceRegistry } from '../devices/registry.ts';
import type { DeviceRecord } from '../devices/types.ts';
import { BridgeError, isBridgeError } from '../errors.ts';
import type { Caller } from '../lease-session/index.ts';
import type { LeaseManager } from '../leases/manager.ts';
import type { Lease, LeaseStore } from '../leases/types.ts';

/** What a caller sees of a device: the contract's `Device`. */
export type DeviceView = Device;

/** What a caller sees of a device (pure). */
export function deviceView(record: DeviceRecord, lease: Lease | null, caller: Caller | null): DeviceView {
  const visible = lease !== null && (caller?.role === 'admin' || caller?.tenant === lease.tenant);
  const { consecutiveFailures: _f, createdAt: _c, updatedAt: _u, ...rest } = record;
  return { ...rest, leased: lease !== null, leaseId: visible ? lease.id : null };
}

/** The tenant of the leases the bridge takes for itself (recording a baseline). */
export const BRIDGE_TENANT = 'devicebridge';

export interface RegisterInput {
  endpoint: string;
  /** Raw labels: the registry validates them and keeps every key. */
  labels?: Record<string, string>;
  provider?: string;
}

export class DeviceService {
  readonly #registry: DeviceRegistry;
  readonly #leases: Pick<LeaseStore, 'leaseOfDevice'>;
  readonly #nodes: Pick<NodeDirectory, 'alive' | 'urlOf'> | undefined;
  readonly #manager: Pick<LeaseManager, 'acquire' | 'release'> | undefined;

  constructor(options: {
    registry: DeviceRegistry;
    leases: Pick<LeaseStore, 'leaseOfDevice'>;
    /** The node directory: where a device's live owner answers (removal runs there). */
    nodes?: Pick<NodeDirectory, 'alive' | 'urlOf'>;
    /** Leases the device while its baseline is recorded again. */
    manager?: Pick<LeaseManager, 'acquire' | 'release'>;
  }) {
    this.#registry = options.registry;
    this.#leases = options.leases;
    this.#nodes = options.nodes;
    this.#manager = options.manager;
  }

  /**
   * Where a change of this device must run: null when here (this node owns it, or its owner is dead
   * and no node drives it), else the live owner node and its URL. The owner holds the device's tunnel
   * and re-publishes what it drives, so a removal made anywhere else would be undone by it.
   * NOT_FOUND for an unknown device; UNAVAILABLE (retryable) when the owner is alive without a URL.
   */
  async ownerElsewhere(id: string): Promise<{ node: string; url: string } | null> {
    const record = await this.#registry.get(id);
    if (record.ownerNode === this.#registry.node || this.#nodes === undefined) return null;
    const alive = await this.#nodes.alive([record.ownerNode]);
    if (!alive.has(record.ownerNode)) return null;
    const url = await this.#nodes.urlOf(record.ownerNode);
    if (url === null) {
      throw new BridgeError(
        'UNAVAILABLE',
        `device ${id} is driven by bridge node ${record.ownerNode}, which has no URL yet; retry`,
        { retryable: true, details: { ownerNode: record.ownerNode, deviceId: id } },
      );
    }
    return { node: record.ownerNode, url };
  }

  async #view(record: DeviceRecord, caller: Caller | null): Promise<DeviceView> {
    return deviceView(record, await this.#leases.leaseOfDevice(record.id), caller);
  }

  async list(caller: Caller | null): Promise<DeviceView[]> {
    return Promise.all((await this.#registry.list()).map((r) => this.#view(r, caller)));
  }

  async register(caller: Caller | null, input: RegisterInput): Promise<DeviceView> {
    const record = await this.#registry.register({
      endpoint: input.endpoint,
      ...(input.labels === undefined ? {} : { labels: input.labels }),
      ...(input.provider === undefined ? {} : { provider: input.provider }),
      source: 'api',
    });
    return this.#view(record, caller);
  }

  remove(id: string, options: { force?: boolean } = {}): Promise<void> {
    return this.#registry.remove(id, options);
  }

  /** Admin: record the device's baseline again, now (on the node that drives it; never while leased). */
  /**
   * Admin: record the device's baseline again, now, on the node that drives it. The device is leased
   * for it (to the bridge itself), so no tenant's lease or unfinished teardown can be running and
   * none can start while it is read (CONFLICT when it is not free); the lease's own end then resets
   * nothing. A quarantined device (never leased) is read as it is and stays quarantined; a device
   * without a baseline yet (never leasable) too.
   */
  async recordBaseline(caller: Caller | null, id: string): Promise<DeviceView> {
    const record = await this.#registry.get(id);
    if (record.state === 'quarantined' || record.baseline === undefined || this.#manager === undefined) {
      return this.#view(await this.#registry.recordBaseline(id), caller);
    }
    let lease: Lease;
    try {
      lease = await this.#manager.acquire({
        selector: { deviceId: id },
        ttlSeconds: 120,
        tenant: BRIDGE_TENANT,
        holder: 'baseline',
      });
    } catch (err) {
      if (isBridgeError(err) && err.code === 'CONFLICT') {
        throw new BridgeError(
          'CONFLICT',
          `device ${id} is leased or its last lease's teardown is still running: its baseline is recorded between leases`,
          { retryable: true, details: { deviceId: id } },
        );
      }
      throw err;
    }
    try {
      return this.#view(await this.#registry.recordBaseline(id, { underLease: lease.id }), caller);
    } finally {
      await this.#manager.release(lease.id, lease.fencingToken).catch(() => undefined);
    }
  }

  async clearQuarantine(caller: Caller | null, id: string): Promise<DeviceView> {
    return this.#view(await this.#registry.clearQuarantine(id), caller);
  }
}
