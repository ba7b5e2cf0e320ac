/** SHA-256 digests as written in manifests and `.sha256` files. Pure. */

/** A canonical digest: exactly 64 lower-case hex characters. */
export const SHA256_RE = /^[0-9a-f]{64}$/;

const LOOSE_SHA256_RE = /^[0-9a-fA-F]{64}$/;

/**
 * Canonical form of a digest: surrounding whitespace (as `String.prototype.trim` defines it, e.g. the
 * trailing newline of a `.sha256` file) removed and hex lower-cased; null if what is left is not
 * exactly 64 hex characters. Idempotent.
 */
export function normalizeSha256(s: string): string | null {
  if (typeof s !== 'string' || s.length > 1024) return null;
  const t = s.trim();
  return LOOSE_SHA256_RE.test(t) ? t.toLowerCase() : null;
}
