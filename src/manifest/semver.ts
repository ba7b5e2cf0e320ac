/**
 * Semantic Versioning 2.0.0 (https://semver.org): syntax check and precedence. Pure.
 */
import { BridgeError } from '../errors.ts';

/** The regular expression published by semver.org (ASCII digits only; no leading `v`). */
export const SEMVER_RE =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Longer strings are refused outright (a manifest version is short; this bounds regex work). */
export const MAX_SEMVER_LENGTH = 256;

export interface Semver {
  major: string;
  minor: string;
  patch: string;
  /** Dot-separated prerelease identifiers; empty for a release. */
  prerelease: string[];
  /** Build metadata identifiers; ignored by precedence. */
  build: string[];
}

export function isSemver(s: unknown): s is string {
  return typeof s === 'string' && s.length <= MAX_SEMVER_LENGTH && SEMVER_RE.test(s);
}

/** Split a semver string into its parts (numeric parts stay strings: they may exceed 2^53), or null. */
export function parseSemver(s: string): Semver | null {
  if (s.length > MAX_SEMVER_LENGTH) return null;
  const m = SEMVER_RE.exec(s);
  if (m === null) return null;
  return {
    major: m[1] ?? '0',
    minor: m[2] ?? '0',
    patch: m[3] ?? '0',
    prerelease: m[4] === undefined ? [] : m[4].split('.'),
    build: m[5] === undefined ? [] : m[5].split('.'),
  };
}

/**
 * Semver precedence: -1 if `a` < `b`, 0 if equal precedence (build metadata is ignored), 1 if `a` > `b`.
 * A prerelease sorts before its release; prerelease identifiers compare numerically when both are
 * numeric, numeric before alphanumeric, alphanumerics in ASCII order, and a shorter list first when
 * all shared identifiers are equal. Throws `INVALID_ARGUMENT` if either is not a semver string.
 */
export function compareSemver(a: string, b: string): -1 | 0 | 1 {
  const pa = parseSemver(a);
  const pb = parseSemver(b);
  if (pa === null || pb === null) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `not a semantic version: ${JSON.stringify(pa === null ? a : b)}`,
    );
  }
  const core =
    compareNumeric(pa.major, pb.major) ||
    compareNumeric(pa.minor, pb.minor) ||
    compareNumeric(pa.patch, pb.patch);
  if (core !== 0) return core;
  if (pa.prerelease.length === 0 || pb.prerelease.length === 0) {
    // A release (no prerelease) has higher precedence than any of its prereleases.
    return sign(pb.prerelease.length - pa.prerelease.length);
  }
  const n = Math.min(pa.prerelease.length, pb.prerelease.length);
  for (let i = 0; i < n; i += 1) {
    const c = compareIdentifier(pa.prerelease[i] ?? '', pb.prerelease[i] ?? '');
    if (c !== 0) return c;
  }
  return sign(pa.prerelease.length - pb.prerelease.length);
}

const NUMERIC = /^\d+$/;

function compareIdentifier(a: string, b: string): -1 | 0 | 1 {
  const an = NUMERIC.test(a);
  const bn = NUMERIC.test(b);
  if (an && bn) return compareNumeric(a, b);
  if (an) return -1;
  if (bn) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Compare digit strings without leading zeros (guaranteed by SEMVER_RE) of any length. */
function compareNumeric(a: string, b: string): -1 | 0 | 1 {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function sign(n: number): -1 | 0 | 1 {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}
