/**
 * The canonical queue key of a selector (one FIFO queue per selector). Pure and free of imports
 * beyond a type, so the console's browser script groups waiters by the very key the lease manager
 * queues them under.
 */
import type { LeaseSelector } from '../devices/selector.ts';

/**
 * The canonical queue key of a selector: identical for selectors that select the same devices by
 * the same terms, whatever the order their labels were written in, in any process. Missing labels
 * and `labels: {}` are the same. A JSON array, so distinct selectors never share a key.
 */
export function queueKeyFor(selector: LeaseSelector): string {
  const labels = Object.entries(selector.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    selector.deviceId ?? null,
    labels.flat(),
    selector.sdkMin ?? null,
    selector.sdkMax ?? null,
  ]);
}
