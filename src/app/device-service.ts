/**
 * Device use cases (list, register, remove, clear a quarantine) and the one device view: a record
 * with whether it is leased, and the lease id only for the lease's tenant and admins.
 */
import type { DeviceRegistry } from '../devices/registry.ts';
import type { DeviceRecord } from '../devices/types.ts';
import type { Lease, LeaseStore } from '../leases/types.ts';
import type { Caller } from './lease-scope.ts';

/** What a caller sees of a device (pure). */
export function deviceView(record: DeviceRecord, lease: Lease | null, caller: Caller | null) {
  const visible = lease !== null && (caller?.role === 'admin' || caller?.tenant === lease.tenant);
  const { consecutiveFailures: _f, createdAt: _c, updatedAt: _u, ...rest } = record;
  return { ...rest, leased: lease !== null, leaseId: visible ? lease.id : null };
}
export type DeviceView = ReturnType<typeof deviceView>;

export interface RegisterInput {
  endpoint: string;
  /** Raw labels: the registry validates them and keeps every key. */
  labels?: Record<string, string>;
  provider?: string;
}

export class DeviceService {
  readonly #registry: DeviceRegistry;
  readonly #leases: Pick<LeaseStore, 'leaseOfDevice'>;

  constructor(options: { registry: DeviceRegistry; leases: Pick<LeaseStore, 'leaseOfDevice'> }) {
    this.#registry = options.registry;
    this.#leases = options.leases;
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

  async clearQuarantine(caller: Caller | null, id: string): Promise<DeviceView> {
    return this.#view(await this.#registry.clearQuarantine(id), caller);
  }
}
