/**
 * Java package names and Android component names (`pkg/.Class`, `pkg/full.Class`) as they appear in a
 * helper manifest's `packageName` and `instrumentationRunner`. The syntax admits only ASCII letters,
 * digits, `_`, `.` and one `/`, so a valid name never carries a shell metacharacter (not even `$`,
 * which Java would allow). Pure.
 */
import { BridgeError } from '../../errors.ts';

/** The permission Android requires of an accessibility service's `<service>` element. */
export const BIND_ACCESSIBILITY_SERVICE = 'android.permission.BIND_ACCESSIBILITY_SERVICE';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_PACKAGE_LENGTH = 255;
const MAX_COMPONENT_LENGTH = 512;

/** Reserved words of Java (plus the literals), which cannot be a package or class name segment. */
const JAVA_RESERVED = new Set([
  '_',
  'abstract',
  'assert',
  'boolean',
  'break',
  'byte',
  'case',
  'catch',
  'char',
  'class',
  'const',
  'continue',
  'default',
  'do',
  'double',
  'else',
  'enum',
  'extends',
  'false',
  'final',
  'finally',
  'float',
  'for',
  'goto',
  'if',
  'implements',
  'import',
  'instanceof',
  'int',
  'interface',
  'long',
  'native',
  'new',
  'null',
  'package',
  'private',
  'protected',
  'public',
  'return',
  'short',
  'static',
  'strictfp',
  'super',
  'switch',
  'synchronized',
  'this',
  'throw',
  'throws',
  'transient',
  'true',
  'try',
  'void',
  'volatile',
  'while',
]);

function isDottedName(s: string, minSegments: number): boolean {
  const segments = s.split('.');
  if (segments.length < minSegments) return false;
  return segments.every((seg) => IDENTIFIER.test(seg) && !JAVA_RESERVED.has(seg));
}

/** `com.example.app`: at least two dot-separated identifiers `[A-Za-z_][A-Za-z0-9_]*`, none reserved. */
export function isJavaPackageName(s: unknown): s is string {
  return typeof s === 'string' && s.length <= MAX_PACKAGE_LENGTH && isDottedName(s, 2);
}

/**
 * An Android component name: `pkg/.Class` (class relative to the package, e.g.
 * `com.example/.Runner` or `com.example/.sub.Runner`) or `pkg/full.Class` (at least two segments).
 */
export function isJavaComponent(s: unknown): s is string {
  if (typeof s !== 'string' || s.length > MAX_COMPONENT_LENGTH) return false;
  const slash = s.indexOf('/');
  if (slash < 0 || s.indexOf('/', slash + 1) >= 0) return false;
  const pkg = s.slice(0, slash);
  const cls = s.slice(slash + 1);
  if (!isJavaPackageName(pkg)) return false;
  return cls.startsWith('.') ? isDottedName(cls.slice(1), 1) : isDottedName(cls, 2);
}

/** The package and fully qualified class of a component; throws `INVALID_ARGUMENT` if malformed. */
export function resolveComponent(runner: string): { packageName: string; className: string } {
  if (!isJavaComponent(runner)) {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      `not a component name (expected pkg/.Class or pkg/full.Class): ${JSON.stringify(runner)}`,
    );
  }
  const slash = runner.indexOf('/');
  const packageName = runner.slice(0, slash);
  const cls = runner.slice(slash + 1);
  return { packageName, className: cls.startsWith('.') ? packageName + cls : cls };
}
