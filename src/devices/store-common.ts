/**
 * What the memory and the Redis device stores share: the list order and the rule that an update
 * keeps the record's id. One definition each, so both stores answer alike (the DeviceStore
 * contract suite runs against both).
 */
import { BridgeError } from '../errors.ts';
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
