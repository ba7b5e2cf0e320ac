/**
 * Admission of shell commands on one node, so one lease or one tenant cannot take the node's memory
 * or its adb server for itself: at most `perLease` commands at a time on one lease, `perTenant` for
 * one tenant, and the output the commands may hold together within `outputBudgetBytes` (a collected
 * command its two caps, a streamed one what it holds before its device is paused). A command that
 * does not fit is refused at once with 429 RATE_LIMITED naming the limit it hit (never queued: the
 * client decides when to retry). Pure bookkeeping, no I/O.
 */
import { BridgeError } from '../../errors.ts';

export interface ShellGateLimits {
  perLease: number;
  perTenant: number;
  /** Bytes the commands of this node may hold at once (collected: both caps; streamed: STREAM_HELD_BYTES). */
  outputBudgetBytes: number;
  /**
   * Output bytes per second one tenant's collected commands are read at, together (a burst of one
   * second's worth first): past it the bridge pauses their streams, so the device waits, not the
   * node's CPU. 0 = no pace.
   */
  outputBytesPerSecond: number;
}

export const DEFAULT_SHELL_GATE_LIMITS: ShellGateLimits = {
  perLease: 4,
  perTenant: 16,
  outputBudgetBytes: 128 * 1024 * 1024,
  outputBytesPerSecond: 8 * 1024 * 1024,
};

export interface ShellAdmission {
  leaseId: string;
  tenant: string;
  /** Output this command may hold (a streamed command: STREAM_HELD_BYTES; 0 admits it past the budget). */
  holdsBytes: number;
}

const MiB = 1024 * 1024;

export class ShellGate {
  readonly limits: ShellGateLimits;
  /** Per tenant: the output allowance left (bytes; negative = owed) and when it was last counted. */
  readonly #allowance = new Map<string, { bytes: number; at: number }>();
  readonly #perLease = new Map<string, number>();
  readonly #perTenant = new Map<string, number>();
  #held = 0;

  constructor(limits: ShellGateLimits = DEFAULT_SHELL_GATE_LIMITS) {
    this.limits = limits;
  }

  /** Output held by admitted commands now (bytes). */
  get heldBytes(): number {
    return this.#held;
  }

  /**
   * Count `bytes` of output read for `tenant` at time `now` (ms); how long (ms) its commands should
   * pause before reading more (0: go on).
   */
  pace(tenant: string, bytes: number, now = performance.now()): number {
    const rate = this.limits.outputBytesPerSecond;
    if (rate <= 0) return 0;
    const last = this.#allowance.get(tenant) ?? { bytes: rate, at: now };
    const refilled = Math.min(rate, last.bytes + ((now - last.at) * rate) / 1000);
    const left = refilled - bytes;
    if (left >= rate) this.#allowance.delete(tenant);
    else this.#allowance.set(tenant, { bytes: left, at: now });
    return left >= 0 ? 0 : Math.ceil((-left * 1000) / rate);
  }

  /** Admit the command or throw RATE_LIMITED; the returned function gives its place back (once). */
  admit(a: ShellAdmission): () => void {
    const onLease = this.#perLease.get(a.leaseId) ?? 0;
    if (onLease >= this.limits.perLease) {
      throw refused(
        `shell: ${onLease} commands already run on this lease (at most ${this.limits.perLease} at a time)`,
        'per-lease',
      );
    }
    const ofTenant = this.#perTenant.get(a.tenant) ?? 0;
    if (ofTenant >= this.limits.perTenant) {
      throw refused(
        `shell: ${ofTenant} commands of tenant ${a.tenant} already run on this node (at most ${this.limits.perTenant} at a time)`,
        'per-tenant',
      );
    }
    if (a.holdsBytes > 0 && this.#held + a.holdsBytes > this.limits.outputBudgetBytes) {
      throw refused(
        `shell: the output budget of this node (${(this.limits.outputBudgetBytes / MiB).toFixed(0)} MiB for the output of running commands) is in use; retry, ask for a smaller maxOutputBytes, or stream the output`,
        'output-budget',
      );
    }
    this.#perLease.set(a.leaseId, onLease + 1);
    this.#perTenant.set(a.tenant, ofTenant + 1);
    this.#held += a.holdsBytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held -= a.holdsBytes;
      decrement(this.#perLease, a.leaseId);
      decrement(this.#perTenant, a.tenant);
    };
  }
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 0) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}

function refused(message: string, limit: string): BridgeError {
  return new BridgeError('RATE_LIMITED', message, { details: { limit, retryAfterSeconds: 1 } });
}
