import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.ts';
import { isSemver } from '../../src/manifest/index.ts';
import { formatLatestPointer, parseLatestPointer } from '../../src/releases/repository.ts';

describe('latest pointer parser (stored bytes are outside input)', () => {
  it('round-trips the pointers publishing writes', () => {
    for (const v of ['0.1.0', '1.2.3-rc.1+build.5', '10.20.30']) {
      expect(parseLatestPointer(Buffer.from(formatLatestPointer(v)), 'x')).toBe(v);
    }
  });

  it('refuses corrupt, duplicate-key, prototype-key and non-semver pointers with INTERNAL', () => {
    for (const text of [
      '',
      '{',
      '[]',
      '{"version":1}',
      '{"version":"latest"}',
      '{"version":"1.0.0","version":"9.0.0"}',
      '{"__proto__":{"version":"1.0.0"}}',
    ]) {
      expect(() => parseLatestPointer(Buffer.from(text), 'x')).toThrow(/^latest pointer x cannot be read: /);
    }
  });

  it('property: any bytes give a semver version or a BridgeError INTERNAL, nothing else', () => {
    const arbitraryJson = fc.jsonValue().map((v) => JSON.stringify({ version: v }));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
          arbitraryJson.map((t) => Buffer.from(t)),
        ),
        (bytes) => {
          try {
            expect(isSemver(parseLatestPointer(bytes, 'x'))).toBe(true);
          } catch (err) {
            expect(err).toBeInstanceOf(BridgeError);
            expect((err as BridgeError).code).toBe('INTERNAL');
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
