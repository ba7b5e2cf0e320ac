/**
 * The `installArgs` allowlist of a helper release manifest. A provider runs
 * `adb <installArgs...> <apk path>`: the first element is exactly `install`, the rest are drawn from
 * `-r -t -d -g`, each at most once, and the consumer appends the APK path itself. Anything else — other
 * flags (`--user 0`), paths, NUL, whitespace or invisible characters, unicode lookalikes (fullwidth
 * dash), shell metacharacters, empty strings — is rejected with an error naming the element's index and
 * the rule. Pure: no I/O.
 */

import { describeValue, typeName } from '../describe-value.ts';
import { BridgeError, type FieldError } from '../errors.ts';

/** The flags allowed after `install`, in the order the contract lists them. */
export const INSTALL_FLAGS = ['-r', '-t', '-d', '-g'] as const;
export type InstallFlag = (typeof INSTALL_FLAGS)[number];

/** `install` plus every flag once. */
export const MAX_INSTALL_ARGS = 1 + INSTALL_FLAGS.length;

/** Elements beyond this many are not inspected one by one (a bound on the size of the error list). */
const MAX_CHECKED_ELEMENTS = 32;

const ALLOWED = new Set<string>(INSTALL_FLAGS);
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;
const NOT_PRINTABLE_ASCII = /[^\u0021-\u007e]/;
const SHELL_META = /[;&|`$<>(){}[\]*?!~#'"]/;
const PATH_LIKE = /[/\\:]|\.(?:apk|apks|apex|jar|zip)$/i;

/**
 * Check `args` against the allowlist. Returns every problem found (empty = valid); each `path` is
 * `installArgs` (the array as a whole) or `installArgs.<index>` of an element that exists.
 */
export function validateInstallArgs(args: unknown, path = 'installArgs'): FieldError[] {
  if (!Array.isArray(args)) {
    const hint = typeof args === 'string' ? ' (not a single string; split it into elements)' : '';
    return [{ path, message: `must be an array of strings${hint} (got ${typeName(args)})` }];
  }
  if (args.length === 0) {
    return [{ path, message: 'must not be empty: the first element must be exactly "install"' }];
  }
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const checked = Math.min(args.length, MAX_CHECKED_ELEMENTS);
  for (let i = 0; i < checked; i += 1) {
    const message = elementProblem(args[i], i, seen);
    if (message !== null) errors.push({ path: `${path}.${i}`, message });
  }
  if (args.length > MAX_CHECKED_ELEMENTS) {
    errors.push({
      path,
      message: `has ${args.length} elements; at most ${MAX_INSTALL_ARGS} are allowed ("install" and ${INSTALL_FLAGS.join(', ')} once each); elements after index ${MAX_CHECKED_ELEMENTS - 1} were not inspected`,
    });
  }
  return errors;
}

function elementProblem(value: unknown, index: number, seen: Set<string>): string | null {
  if (typeof value !== 'string') return `must be a string (got ${describeValue(value)})`;
  if (index === 0)
    return value === 'install' ? null : `must be exactly "install" (got ${describeValue(value)})`;
  if (value === '') return 'must not be an empty string';
  if (value.includes('\u0000')) return `must not contain NUL (got ${describeValue(value)})`;
  if (WHITESPACE_OR_CONTROL.test(value)) {
    return `must not contain whitespace or control characters (got ${describeValue(value)})`;
  }
  if (NOT_PRINTABLE_ASCII.test(value)) {
    return `must contain only ASCII characters; unicode lookalikes and invisible characters are rejected (got ${describeValue(value)})`;
  }
  if (PATH_LIKE.test(value)) {
    return `must not be a path: the consumer appends the APK path itself (got ${describeValue(value)})`;
  }
  if (SHELL_META.test(value)) return `must not contain shell metacharacters (got ${describeValue(value)})`;
  if (!ALLOWED.has(value)) {
    return `${describeValue(value)} is not an allowed install flag (allowed: ${INSTALL_FLAGS.join(', ')})`;
  }
  if (seen.has(value)) return `${describeValue(value)} appears more than once`;
  seen.add(value);
  return null;
}

/** Format field errors as one line: `installArgs.3: "-r" appears more than once; ...`. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors.map((e) => (e.path === '' ? e.message : `${e.path}: ${e.message}`)).join('; ');
}

/**
 * Return a copy of `args` when it satisfies the allowlist; otherwise throw a `BridgeError` with code
 * `INSTALL_ARGS_REJECTED` and `details.errors: FieldError[]`.
 */
export function assertInstallArgs(args: unknown, path = 'installArgs'): string[] {
  const errors = validateInstallArgs(args, path);
  if (errors.length > 0) {
    throw new BridgeError('INSTALL_ARGS_REJECTED', `installArgs rejected: ${formatFieldErrors(errors)}`, {
      details: { errors },
    });
  }
  return [...(args as string[])];
}

/**
 * Parse a command-line value such as `--install-args "install -r -t"`: leading and trailing ASCII
 * spaces are dropped and the rest is split on runs of ASCII spaces (U+0020) only — tabs, newlines and
 * other whitespace stay inside an element and are rejected by the allowlist. Throws like
 * `assertInstallArgs`.
 */
export function parseInstallArgsString(s: string): string[] {
  const trimmed = s.replace(/^ +| +$/g, '');
  return assertInstallArgs(trimmed === '' ? [] : trimmed.split(/ +/));
}
