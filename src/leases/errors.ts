/**
 * The one table of lease-store failures. The Redis scripts return these negative integers (see the
 * headers of `lua/*.lua`); the memory store throws the same errors, so both stores fail alike.
 */
import { BridgeError, type ErrorCode } from '../errors.ts';

export const LeaseFailure = {
  /** No lease with this id (never existed, or its ended record aged out). */
  NotFound: -1,
  /** The lease was released or expired (or is past its expiresAt and waiting to be claimed). */
  Ended: -2,
  /** The fencing token does not match the lease's token. */
  FenceMismatch: -3,
  /** The lease exists but is on another device. */
  WrongDevice: -4,
  /** The tenant holds its quota (of leases, or of queued waiters) already: see `quotaError`. */
  OverQuota: -5,
} as const;
export type LeaseFailure = (typeof LeaseFailure)[keyof typeof LeaseFailure];

const TABLE: Record<LeaseFailure, { code: ErrorCode; message: string }> = {
  [LeaseFailure.NotFound]: { code: 'NOT_FOUND', message: 'lease not found' },
  [LeaseFailure.Ended]: { code: 'LEASE_EXPIRED', message: 'lease has ended' },
  [LeaseFailure.FenceMismatch]: { code: 'CONFLICT', message: 'fencing token does not match the lease' },
  [LeaseFailure.WrongDevice]: { code: 'CONFLICT', message: 'lease is not on this device' },
  [LeaseFailure.OverQuota]: { code: 'RATE_LIMITED', message: 'the tenant holds its quota' },
};

export function isLeaseFailure(value: unknown): value is LeaseFailure {
  return typeof value === 'number' && Object.hasOwn(TABLE, value);
}

export function leaseError(failure: LeaseFailure, details: Record<string, unknown> = {}): BridgeError {
  const { code, message } = TABLE[failure];
  // A fencing conflict is final for the caller holding the stale token: do not invite a retry.
  return new BridgeError(code, message, { details, retryable: false });
}

/**
 * A tenant at its quota (both stores answer it; `held` is what the store counted in the step that
 * refused): 429 RATE_LIMITED with `details.quota` and `details.limit`.
 */
export function quotaError(
  quota: 'leases' | 'waiters',
  tenant: string,
  held: number,
  limit: number,
): BridgeError {
  const message =
    quota === 'leases'
      ? `tenant ${tenant} holds ${held} leases, its quota is ${limit}: release one first`
      : `tenant ${tenant} has ${held} waiters queued, its quota is ${limit}: wait for one to end first`;
  return new BridgeError('RATE_LIMITED', message, { details: { quota, limit } });
}
