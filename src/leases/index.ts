export { type LeaseSelector, LeaseSelectorSchema, validateSelector } from '../devices/selector.ts';
export { LeaseFailure, leaseError } from './errors.ts';
export {
  type AcquireOptions,
  type Candidates,
  LeaseManager,
  type LeaseManagerOptions,
  type ReleaseResult,
  type TeardownReason,
} from './manager.ts';
export { MemoryLeaseStore } from './memory-store.ts';
export { type OpenLeaseStoreOptions, openLeaseStore } from './open-store.ts';
export { queueKeyFor } from './queue-key.ts';
export { newLeaseId, type StoreClockOptions } from './store-common.ts';
export type {
  AcquireRequest,
  EndedLease,
  Lease,
  LeaseState,
  LeaseStore,
  TeardownRecord,
} from './types.ts';
export { MAX_TEARDOWN_LIST } from './types.ts';
