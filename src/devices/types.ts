import type { BaselineSummary, DeviceBaseline } from './baseline.ts';

/**
 * Device registry contracts. Device state lives behind `DeviceStore` (memory by default, Redis in
 * production) so any bridge node can answer; the node that owns a device's adb connection is
 * recorded on it (`ownerNode`).
 */

/**
 * A device's state. `ownerless` is never stored: readers derive it for a device whose owner node's
 * heartbeat expired (dead node; a surviving node that can reach it takes it over).
 */
export type DeviceState = 'online' | 'offline' | 'unauthorized' | 'quarantined' | 'ownerless';

export interface DeviceProperties {
  sdk?: number;
  release?: string;
  model?: string;
  manufacturer?: string;
  abi?: string;
}

export interface DeviceRecord {
  /** Stable id (derived from the endpoint or serial; URL-safe). */
  id: string;
  /** The serial adb uses (`host:port` for tunnels). */
  serial: string;
  /** `host:port` for tunnels; absent for devices the adb server found by itself (USB). */
  endpoint?: string;
  provider?: string;
  labels: Record<string, string>;
  state: DeviceState;
  /** Why it is quarantined (teardown failure, repeated health failures, admin). */
  quarantineReason?: string;
  properties: DeviceProperties;
  /** Helper status by helper name: the last ensure verdict seen on this node. */
  helpers: Record<string, { versionCode: number; version?: string; sha256: string; checkedAt: number }>;
  source: 'adb' | 'api' | 'config' | 'simulator';
  /**
   * The baseline the reset between tenants restores (its counts; the whole in the store's
   * `getBaseline`), recorded when the device joined the pool; absent until then (not leasable).
   */
  baseline?: BaselineSummary;
  ownerNode: string;
  consecutiveFailures: number;
  createdAt: number;
  updatedAt: number;
}

/**
 * The store's generation: made by the first reader that finds the store without one. A store that
 * loses its data (Redis restarted empty) loses its generation too, so a node that knew the old one
 * tells a loss (another generation) from a removal (the same one, with the record gone).
 */
export interface StoreGeneration {
  /** Random; another id = the store lost its data since. */
  id: string;
  /** When it was made (ms since the epoch, by the maker's clock). */
  since: number;
  /** Its maker had known an earlier generation: the store had lost its data. */
  afterLoss: boolean;
}

export interface DeviceStore {
  list(): Promise<DeviceRecord[]>;
  get(id: string): Promise<DeviceRecord | null>;
  /** Create or replace. */
  put(record: DeviceRecord): Promise<void>;
  /** Apply a change atomically (read-modify-write); null when absent. */
  update(id: string, change: (record: DeviceRecord) => DeviceRecord): Promise<DeviceRecord | null>;
  /** Remove a record (and its baseline). */
  delete(id: string): Promise<boolean>;
  /** The device's baseline for the reset between tenants; null when none was recorded. */
  getBaseline(id: string): Promise<DeviceBaseline | null>;
  /** Record (replace) the device's baseline. */
  putBaseline(id: string, baseline: DeviceBaseline): Promise<void>;
  /**
   * The store's generation; made when the store has none, `afterLoss` when the caller `known` an
   * earlier one (its id). Never replaces an existing generation.
   */
  generation(known?: string): Promise<StoreGeneration>;
  close(): Promise<void>;
}
