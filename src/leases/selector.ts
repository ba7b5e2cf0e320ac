/**
 * The lease queue's rules: the canonical queue key used for fair FIFO waiting (one queue per
 * selector; the selector itself is `devices/selector.ts`) and what a waiter id looks like. Pure.
 */

/** The canonical queue key (its own pure module: the console's browser script uses it too). */
export { queueKeyFor } from './queue-key.ts';

/** What a client-chosen waiter id looks like (`waiter_` and 16..64 URL-safe characters). */
export const WAITER_ID_PATTERN = /^waiter_[A-Za-z0-9_-]{16,64}$/;
