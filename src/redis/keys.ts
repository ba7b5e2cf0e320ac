/**
 * The one key builder. Every key of a store is `<prefix>{<tag>}:<part>[:<part>…]`: the prefix
 * separates deployments (and tests), the hash tag puts every key of the store in ONE Redis Cluster
 * slot so its multi-key scripts are legal on a cluster. A prefix with `{` or `}` would change the
 * tag and is refused.
 */
import { invalidArgument } from '../errors.ts';

/** Throws INVALID_ARGUMENT when `prefix` would break the hash tag. */
export function checkKeyPrefix(prefix: string): string {
  if (/[{}]/.test(prefix)) {
    throw invalidArgument(`Redis key prefix ${JSON.stringify(prefix)} must not contain { or }`, [
      { path: 'prefix', message: 'must not contain { or }' },
    ]);
  }
  return prefix;
}

export class KeySpace {
  /** `<prefix>{<tag>}:` — the common start of every key (for SCAN, and for scripts that build keys). */
  readonly base: string;

  /** `tag` in braces, e.g. `{leases}`. */
  constructor(prefix: string, tag: string) {
    if (!/^\{[^{}]+\}$/.test(tag)) throw new Error(`bad hash tag ${JSON.stringify(tag)}`);
    this.base = `${checkKeyPrefix(prefix)}${tag}:`;
  }

  /** `<base><kind>` or `<base><kind>:<id>`. */
  key(kind: string, id?: string): string {
    return id === undefined ? `${this.base}${kind}` : `${this.base}${kind}:${id}`;
  }
}
