/**
 * Pure parsing of artifact store specs: `file:DIR` (relative or absolute, or `file:///abs/dir`) and
 * `s3://BUCKET[/PREFIX]`. No I/O; `open-store.ts` turns a parsed spec into a store.
 */
import { BridgeError } from '../errors.ts';
import { validatePrefix } from './store.ts';

export type StoreSpec = { kind: 'fs'; dir: string } | { kind: 's3'; bucket: string; prefix: string };

function quote(spec: string): string {
  // Never echo something that looks like it carries credentials (user:secret@host).
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(spec)) return '(spec with credentials, not shown)';
  const shown = spec.length > 120 ? `${spec.slice(0, 120)}…` : spec;
  return JSON.stringify(shown);
}

function invalidSpec(spec: string, problem: string): BridgeError {
  return new BridgeError(
    'INVALID_ARGUMENT',
    `invalid artifact store spec ${quote(spec)}: ${problem} (expected file:DIR or s3://BUCKET/PREFIX)`,
    { details: { field: 'artifactStore', problem } },
  );
}

/**
 * Validate an S3 bucket name against the DNS-compatible naming rules: 3-63 characters of lower-case
 * letters, digits, '.' and '-', starting and ending with a letter or digit, no '..', '.-' or '-.',
 * not formatted like an IPv4 address, not starting with `xn--` or `sthree-`, not ending `-s3alias`
 * or `--ol-s3`. Returns the problem, or null when valid.
 */
export function bucketNameProblem(bucket: string): string | null {
  if (bucket.length < 3 || bucket.length > 63) return 'bucket name must be 3-63 characters';
  if (!/^[a-z0-9.-]+$/.test(bucket))
    return "bucket name may contain only lower-case letters, digits, '.' and '-'";
  if (!/^[a-z0-9]/.test(bucket) || !/[a-z0-9]$/.test(bucket)) {
    return 'bucket name must start and end with a letter or digit';
  }
  if (bucket.includes('..') || bucket.includes('.-') || bucket.includes('-.')) {
    return "bucket name must not contain '..', '.-' or '-.'";
  }
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(bucket)) return 'bucket name must not be formatted as an IP address';
  if (bucket.startsWith('xn--') || bucket.startsWith('sthree-')) return 'bucket name uses a reserved prefix';
  if (bucket.endsWith('-s3alias') || bucket.endsWith('--ol-s3')) return 'bucket name uses a reserved suffix';
  return null;
}

/** Throws INVALID_ARGUMENT naming the rule when the bucket name is not DNS-valid. */
export function validateBucketName(bucket: string): void {
  const problem = typeof bucket === 'string' ? bucketNameProblem(bucket) : 'bucket name must be a string';
  if (problem !== null) {
    throw new BridgeError('INVALID_ARGUMENT', `invalid S3 bucket ${JSON.stringify(bucket)}: ${problem}`, {
      details: { field: 'bucket', problem },
    });
  }
}

/**
 * Normalise an S3 key prefix: '' or segments joined by '/' with exactly one trailing '/'. Each
 * segment follows the key rules. Leading/trailing slashes are tolerated and dropped.
 */
export function normalizeS3Prefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '') return '';
  validatePrefix(trimmed);
  return `${trimmed}/`;
}

/** Parse a store spec strictly. Throws INVALID_ARGUMENT naming the spec and the problem. */
export function parseStoreSpec(spec: string): StoreSpec {
  if (typeof spec !== 'string' || spec.length === 0) {
    throw invalidSpec(String(spec), 'empty');
  }
  if (/[\u0000-\u001f\u007f]/.test(spec))
    throw invalidSpec(spec.replace(/[\u0000-\u001f\u007f]/g, '?'), 'contains control characters');
  if (spec.startsWith('file:')) {
    let dir = spec.slice('file:'.length);
    if (dir.startsWith('//')) {
      if (!dir.startsWith('///'))
        throw invalidSpec(spec, 'file URLs must not name a host (use file:///abs/dir)');
      dir = dir.slice(2);
    }
    if (dir === '') throw invalidSpec(spec, 'missing directory after file:');
    return { kind: 'fs', dir };
  }
  if (spec.startsWith('s3://')) {
    const rest = spec.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash === -1 ? rest : rest.slice(0, slash);
    const rawPrefix = slash === -1 ? '' : rest.slice(slash + 1);
    if (bucket === '') throw invalidSpec(spec, 'missing bucket name');
    if (bucket.includes('@') || bucket.includes(':')) {
      throw invalidSpec(
        spec,
        'credentials or ports do not belong in the spec (use S3_ENDPOINT and the AWS env)',
      );
    }
    const bucketProblem = bucketNameProblem(bucket);
    if (bucketProblem !== null) throw invalidSpec(spec, bucketProblem);
    if (/[?#]/.test(rawPrefix)) throw invalidSpec(spec, "prefix must not contain '?' or '#'");
    if (rawPrefix.startsWith('/') || rawPrefix.includes('//')) {
      throw invalidSpec(spec, "contains an empty prefix segment ('//')");
    }
    const withoutSlash = rawPrefix.endsWith('/') ? rawPrefix.slice(0, -1) : rawPrefix;
    if (withoutSlash !== '') {
      try {
        validatePrefix(withoutSlash);
      } catch (err) {
        throw invalidSpec(spec, err instanceof BridgeError ? `prefix: ${err.message}` : 'invalid prefix');
      }
    }
    return { kind: 's3', bucket, prefix: withoutSlash === '' ? '' : `${withoutSlash}/` };
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(spec)?.[1];
  throw invalidSpec(
    spec,
    scheme === undefined ? 'missing scheme' : `unknown scheme ${JSON.stringify(`${scheme}:`)}`,
  );
}

/** Format a parsed spec back (credential-free description). */
export function formatStoreSpec(spec: StoreSpec): string {
  return spec.kind === 'fs' ? `file:${spec.dir}` : `s3://${spec.bucket}/${spec.prefix}`;
}
