import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bucketNameProblem,
  isValidKey,
  normalizeS3Prefix,
  parseStoreSpec,
  resolveRange,
  validateKey,
  validatePrefix,
} from '../../src/artifacts/index.ts';
import { BridgeError } from '../../src/errors.ts';

function problemOf(fn: () => void): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BridgeError);
    expect((err as BridgeError).code).toBe('INVALID_ARGUMENT');
    return (err as BridgeError).message;
  }
  throw new Error('expected a BridgeError');
}

const segmentChar = fc.constantFrom(...'abcXYZ019._@+-'.split(''));
const segment = fc
  .array(segmentChar, { minLength: 1, maxLength: 12 })
  .map((cs) => cs.join(''))
  .filter((s) => s !== '.' && s !== '..');
const validKey = fc.array(segment, { minLength: 1, maxLength: 6 }).map((ss) => ss.join('/'));

describe('validateKey', () => {
  it('accepts the release layout keys', () => {
    for (const key of [
      `artifacts/${'a'.repeat(64)}`,
      'helpers/android-snapshot-helper/versions/1.2.3+build.4/manifest.json',
      'helpers/x/latest.json',
      'a',
      '.hidden/file',
      'user@host/a..b',
    ]) {
      expect(() => validateKey(key)).not.toThrow();
    }
  });

  it.each([
    ['', 'must not be empty'],
    ['/abs', "must not start with '/'"],
    ['a//b', 'empty segment'],
    ['a/', "must not end with '/'"],
    ['a/../b', "'..' segment"],
    ['..', "'..' segment"],
    ['./a', "'.' segment"],
    ['a\\b', 'backslash'],
    ['a\u0000b', 'NUL'],
    ['a\nb', 'U+000a'],
    ['a\u007fb', 'U+007f'],
    ['a b', 'character " " not allowed'],
    ['a/é', 'character "é" not allowed'],
    ['a?b', 'character "?" not allowed'],
    ['x'.repeat(1025), 'longer than 1024'],
  ])('rejects %j naming the problem', (key, problem) => {
    expect(problemOf(() => validateKey(key))).toContain(problem);
  });

  it('accepts exactly 1024 characters', () => {
    expect(() => validateKey('x'.repeat(1024))).not.toThrow();
  });

  it('property: generated valid keys are accepted', () => {
    fc.assert(fc.property(validKey, (key) => isValidKey(key)));
  });

  it('property: no accepted key has a leading slash, a dot segment, a backslash or a control char', () => {
    const alphabet = fc.constantFrom('a', 'b', '.', '/', '\\', '\u0000', '\n', '-', '@', ' ', '~');
    const arbitraryKey = fc.oneof(
      fc.array(alphabet, { maxLength: 20 }).map((cs) => cs.join('')),
      fc.string({ unit: 'binary', maxLength: 40 }),
      validKey,
    );
    fc.assert(
      fc.property(arbitraryKey, (key) => {
        if (!isValidKey(key)) return true;
        const segments = key.split('/');
        return (
          !key.startsWith('/') &&
          !segments.includes('..') &&
          !segments.includes('.') &&
          !segments.includes('') &&
          !/[\\\u0000-\u001f\u007f]/.test(key) &&
          /^[A-Za-z0-9._@+\-/]+$/.test(key)
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('property: arbitrary input never throws anything but a BridgeError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), fc.anything()), (value) => {
        for (const fn of [validateKey, validatePrefix]) {
          try {
            fn(value as string);
          } catch (err) {
            if (!(err instanceof BridgeError) || err.code !== 'INVALID_ARGUMENT') return false;
          }
        }
        return true;
      }),
      { numRuns: 1000 },
    );
  });
});

describe('validatePrefix', () => {
  it('accepts empty, keys and keys with one trailing slash', () => {
    for (const p of ['', 'helpers/', 'helpers/a', 'artifacts/ab'])
      expect(() => validatePrefix(p)).not.toThrow();
  });
  it('rejects slashes at the start, doubled and dot segments', () => {
    expect(problemOf(() => validatePrefix('/'))).toContain("must not start with '/'");
    expect(problemOf(() => validatePrefix('a//'))).toContain("must not end with '/'");
    expect(problemOf(() => validatePrefix('../'))).toContain("'..' segment");
  });
});

describe('resolveRange', () => {
  it('clamps the end and refuses unsatisfiable ranges', () => {
    expect(resolveRange({ start: 2, end: 100 }, 10, 'k')).toEqual({ start: 2, end: 9 });
    expect(resolveRange({ start: 0, end: 0 }, 1, 'k')).toEqual({ start: 0, end: 0 });
    expect(problemOf(() => resolveRange({ start: 10, end: 12 }, 10, 'k'))).toContain('not satisfiable');
    expect(problemOf(() => resolveRange({ start: 5, end: 4 }, 10, 'k'))).toContain('invalid byte range');
    expect(problemOf(() => resolveRange({ start: -1, end: 4 }, 10, 'k'))).toContain('invalid byte range');
    expect(problemOf(() => resolveRange({ start: 0.5, end: 4 }, 10, 'k'))).toContain('invalid byte range');
  });
  it('property: a resolved range lies inside the object', () => {
    fc.assert(
      fc.property(fc.nat(1000), fc.nat(2000), fc.integer({ min: 1, max: 1000 }), (start, len, size) => {
        try {
          const r = resolveRange({ start, end: start + len }, size, 'k');
          return r.start === start && r.end >= r.start && r.end < size;
        } catch (err) {
          return err instanceof BridgeError && start >= size;
        }
      }),
    );
  });
});

describe('parseStoreSpec', () => {
  it('parses file: specs, relative and absolute', () => {
    expect(parseStoreSpec('file:./var/artifacts')).toEqual({ kind: 'fs', dir: './var/artifacts' });
    expect(parseStoreSpec('file:/srv/a')).toEqual({ kind: 'fs', dir: '/srv/a' });
    expect(parseStoreSpec('file:///srv/a')).toEqual({ kind: 'fs', dir: '/srv/a' });
  });

  it('parses s3: specs with and without prefix', () => {
    expect(parseStoreSpec('s3://my-bucket')).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: '' });
    expect(parseStoreSpec('s3://my-bucket/')).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: '' });
    expect(parseStoreSpec('s3://my.bucket.1/rel/v1')).toEqual({
      kind: 's3',
      bucket: 'my.bucket.1',
      prefix: 'rel/v1/',
    });
    expect(parseStoreSpec('s3://abc/rel/')).toEqual({ kind: 's3', bucket: 'abc', prefix: 'rel/' });
  });

  it.each([
    ['', 'empty'],
    ['/var/artifacts', 'missing scheme'],
    ['gs://bucket/x', 'unknown scheme "gs:"'],
    ['http://host/x', 'unknown scheme "http:"'],
    ['file:', 'missing directory'],
    ['file://host/x', 'must not name a host'],
    ['s3://', 'missing bucket'],
    ['s3://ab', '3-63 characters'],
    ['s3://My-Bucket', 'lower-case'],
    ['s3://-bucket', 'start and end'],
    ['s3://a..b', "'..'"],
    ['s3://192.168.1.1', 'IP address'],
    ['s3://xn--bucket', 'reserved prefix'],
    ['s3://bucket//x', 'empty prefix segment'],
    ['s3://bucket/a/../b', "'..' segment"],
    ['s3://bucket/a?x=1', "'?'"],
    ['s3://bucket/a b', 'not allowed'],
    ['s3://bucket:9000/x', 'ports'],
    ['file:/a\nb', 'control characters'],
  ])('rejects %j naming the problem', (spec, problem) => {
    const message = problemOf(() => parseStoreSpec(spec));
    expect(message).toContain(problem);
    expect(message).toContain('expected file:DIR or s3://BUCKET/PREFIX');
  });

  it('never echoes credentials from a spec', () => {
    const message = problemOf(() => parseStoreSpec('s3://AKIA:supersecret@bucket/x'));
    expect(message).not.toContain('supersecret');
  });

  it('property: arbitrary specs parse or throw INVALID_ARGUMENT; parsed s3 parts are valid', () => {
    const spec = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ maxLength: 30 }).map((s) => `s3://${s}`),
      fc
        .tuple(fc.stringMatching(/^[a-z0-9.-]{1,70}$/), fc.string({ maxLength: 20 }))
        .map(([b, p]) => `s3://${b}/${p}`),
      fc.string({ maxLength: 30 }).map((s) => `file:${s}`),
    );
    fc.assert(
      fc.property(spec, (s) => {
        let parsed: ReturnType<typeof parseStoreSpec>;
        try {
          parsed = parseStoreSpec(s);
        } catch (err) {
          return err instanceof BridgeError && err.code === 'INVALID_ARGUMENT';
        }
        if (parsed.kind === 'fs') return parsed.dir.length > 0 && !parsed.dir.includes('\u0000');
        return (
          bucketNameProblem(parsed.bucket) === null &&
          (parsed.prefix === '' || (parsed.prefix.endsWith('/') && isValidKey(parsed.prefix.slice(0, -1))))
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('normalizeS3Prefix drops outer slashes and validates segments', () => {
    expect(normalizeS3Prefix('')).toBe('');
    expect(normalizeS3Prefix('/a/b/')).toBe('a/b/');
    expect(problemOf(() => normalizeS3Prefix('a/../b'))).toContain("'..'");
  });
});
