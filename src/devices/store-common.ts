/**
 * What the memory and the Redis device stores share: the list order and the rule that an update
 * keeps the record's id. One definition each, so both stores answer alike (the DeviceStore
 * contract suite runs against both).
 */
import { BridgeError } from '../errors.ts';
import { decodeStored } from '../stored-record.ts';
import type { DeviceBaseline } from './baseline.ts';
import { StoredBaseline } from './stored-records.ts';
import type { DeviceRecord } from './types.ts';

/** Stable order for device lists: by id, code-unit order. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The record an update produced, refused (INTERNAL) when `change` altered its id. */
export function checkUpdatedRecord(id: string, next: DeviceRecord): DeviceRecord {
  if (next.id !== id) {
    throw new BridgeError('INTERNAL', `update of device ${id} must not change its id (got ${next.id})`);
  }
  return next;
}

/**
 * A deep copy of a record (the memory store hands out copies). Field by field: a record is flat data
 * whose only nested parts are `labels`, `properties` and the helper verdicts (structuredClone costs
 * ~10x more and is paid on every lease-scoped call). Spread and fromEntries define own properties, so
 * no key (not even `__proto__`) reaches a prototype. A new nested field must be copied here too (the
 * contract's copy test mutates every nested part).
 */
export function copyDeviceRecord(record: DeviceRecord): DeviceRecord {
  return {
    ...record,
    labels: { ...record.labels },
    properties: { ...record.properties },
    helpers: Object.fromEntries(Object.entries(record.helpers).map(([name, h]) => [name, { ...h }])),
    ...(record.baseline === undefined ? {} : { baseline: { ...record.baseline } }),
  };
}

/** A stored baseline (JSON): a StoredRecordError (INTERNAL) naming the device's key and first bad field. */
export function decodeBaseline(json: string, key: string): DeviceBaseline {
  return decodeStored(StoredBaseline, json, { kind: 'device baseline', key }) as DeviceBaseline;
}
