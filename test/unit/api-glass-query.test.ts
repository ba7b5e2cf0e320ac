/**
 * The a11y tree query's `package` follows the one Java package rule (src/protocol/android/java-names.ts):
 * empty (any window) or a package name the manifests would accept, nothing looser.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { A11yTreeQuerySchema } from '../../src/api/index.ts';
import { isJavaPackageName } from '../../src/protocol/android/java-names.ts';

const accepts = (pkg: string) => A11yTreeQuerySchema.safeParse({ package: pkg }).success;

describe('A11yTreeQuerySchema package', () => {
  it('accepts a package name or nothing; refuses what the manifest rule refuses', () => {
    expect(accepts('')).toBe(true);
    expect(accepts('com.example.app')).toBe(true);
    for (const bad of ['a..b', '.com.example', '1com.example', 'com.class.app', 'single', 'com.example.']) {
      expect(accepts(bad), bad).toBe(false);
    }
  });

  it('agrees with isJavaPackageName on any string (property)', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_]{0,6}$/);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(segment, { maxLength: 4 }).map((s) => s.join('.')),
          fc.string(),
        ),
        (pkg) => {
          expect(accepts(pkg)).toBe(pkg === '' || isJavaPackageName(pkg));
        },
      ),
      { numRuns: 500 },
    );
  });
});
