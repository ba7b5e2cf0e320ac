/**
 * The lease scripts (`lua/*.lua`, fragments in `lua/includes/`), loaded and run through the shared
 * script loader on the store's ioredis client (EVALSHA, EVAL after NOSCRIPT). Negative
 * integer replies are lease failures mapped to BridgeErrors through the one table in `errors.ts`.
 */
import type { Redis } from 'ioredis';
import { loadScripts, ScriptSet } from '../redis/script-loader.ts';
import { isLeaseFailure, leaseError } from './errors.ts';

export const SCRIPT_NAMES = [
  'acquire',
  'renew',
  'release',
  'release-empty',
  'claim-expired',
  'claim-stalled',
  'touch-teardown',
  'check-fence',
  'lease-of-device',
  'list-active',
  'enqueue',
  'dequeue',
  'waiting',
  'list-waiters',
  'record-teardown',
  'claim-deferred',
  'list-teardowns',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** Where the lease scripts live (kept beside this module, also in a built package). */
export const LEASE_SCRIPT_DIR = new URL('./lua/', import.meta.url);

/** The expanded script sources (includes inlined), read from disk on first use. */
export function scriptSources(): Map<ScriptName, string> {
  const scripts = loadScripts(LEASE_SCRIPT_DIR, SCRIPT_NAMES);
  return new Map([...scripts].map(([name, script]) => [name, script.lua]));
}

export class LeaseScripts {
  readonly #scripts: ScriptSet<ScriptName>;

  constructor(client: Redis) {
    this.#scripts = new ScriptSet(client, {
      dir: LEASE_SCRIPT_DIR,
      names: SCRIPT_NAMES,
    });
  }

  /**
   * Run a script. Throws the mapped BridgeError when it replies with a negative failure code;
   * otherwise resolves its raw reply.
   */
  run(
    name: ScriptName,
    keys: string[],
    args: Array<string | number>,
    details?: Record<string, unknown>,
  ): Promise<unknown> {
    return this.#scripts.run(name, keys, args).then((reply) => {
      if (isLeaseFailure(reply)) throw leaseError(reply, details);
      return reply;
    });
  }
}
