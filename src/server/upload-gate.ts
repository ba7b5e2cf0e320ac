/**
 * Concurrent uploads (an APK published or installed) on one node: each is streamed to a temporary
 * file, then read and pushed to a device, so each holds disk, file descriptors and some memory
 * until it is answered. At most `perTenant` at a time for one tenant and `perNode` for the node;
 * past either, 429 RATE_LIMITED naming the limit, at once (never queued: the client retries).
 * Pure bookkeeping.
 */
import { BridgeError } from '../errors.ts';

export interface UploadLimits {
  perTenant: number;
  perNode: number;
}

export const DEFAULT_UPLOAD_LIMITS: UploadLimits = { perTenant: 2, perNode: 4 };

export class UploadGate {
  readonly limits: UploadLimits;
  readonly #perTenant = new Map<string, number>();
  #total = 0;

  constructor(limits: UploadLimits = DEFAULT_UPLOAD_LIMITS) {
    this.limits = limits;
  }

  get active(): number {
    return this.#total;
  }

  /** Admit an upload of `tenant` or throw RATE_LIMITED; the returned function ends it (once). */
  admit(tenant: string): () => void {
    const ofTenant = this.#perTenant.get(tenant) ?? 0;
    if (ofTenant >= this.limits.perTenant) {
      throw refused(
        `uploads: ${ofTenant} of tenant ${tenant} already under way (at most ${this.limits.perTenant} at a time); retry when one is answered`,
        'uploads-per-tenant',
      );
    }
    if (this.#total >= this.limits.perNode) {
      throw refused(
        `uploads: ${this.#total} already under way on this node (at most ${this.limits.perNode} at a time); retry shortly`,
        'uploads-per-node',
      );
    }
    this.#perTenant.set(tenant, ofTenant + 1);
    this.#total += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#total -= 1;
      const n = (this.#perTenant.get(tenant) ?? 1) - 1;
      if (n <= 0) this.#perTenant.delete(tenant);
      else this.#perTenant.set(tenant, n);
    };
  }
}

function refused(message: string, limit: string): BridgeError {
  return new BridgeError('RATE_LIMITED', message, { details: { limit, retryAfterSeconds: 1 } });
}
