/**
 * In-process device store (the embedded default). Records are copied in and out, so callers never
 * share mutable state with the store; `update` is atomic because `change` runs synchronously.
 */

import { randomUUID } from 'node:crypto';
import type { DeviceBaseline } from './baseline.ts';
import { checkUpdatedRecord, compareIds, copyDeviceRecord, decodeBaseline } from './store-common.ts';
import type { DeviceRecord, DeviceStore, StoreGeneration } from './types.ts';

export class MemoryDeviceStore implements DeviceStore {
  readonly #records = new Map<string, DeviceRecord>();
  /** Baselines as JSON (copied in and out like the records). */
  readonly #baselines = new Map<string, string>();
  /** One for the store's life: memory is never lost while the process runs. */
  readonly #generation: StoreGeneration = { id: randomUUID(), since: Date.now(), afterLoss: false };

  async list(): Promise<DeviceRecord[]> {
    return [...this.#records.values()].sort((a, b) => compareIds(a.id, b.id)).map(copyDeviceRecord);
  }

  async get(id: string): Promise<DeviceRecord | null> {
    const record = this.#records.get(id);
    return record ? copyDeviceRecord(record) : null;
  }

  async put(record: DeviceRecord): Promise<void> {
    this.#records.set(record.id, copyDeviceRecord(record));
  }

  async update(id: string, change: (record: DeviceRecord) => DeviceRecord): Promise<DeviceRecord | null> {
    const current = this.#records.get(id);
    if (!current) return null;
    const next = checkUpdatedRecord(id, change(copyDeviceRecord(current)));
    this.#records.set(id, copyDeviceRecord(next));
    return copyDeviceRecord(next);
  }

  async delete(id: string): Promise<boolean> {
    this.#baselines.delete(id);
    return this.#records.delete(id);
  }

  async getBaseline(id: string): Promise<DeviceBaseline | null> {
    const json = this.#baselines.get(id);
    return json === undefined ? null : decodeBaseline(json, id);
  }

  async putBaseline(id: string, baseline: DeviceBaseline): Promise<void> {
    this.#baselines.set(id, JSON.stringify(baseline));
  }

  async generation(): Promise<StoreGeneration> {
    return { ...this.#generation };
  }

  async close(): Promise<void> {}
}
