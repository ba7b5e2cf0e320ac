/**
 * The helper release manifest (DESIGN.md "Release manifest"; the helper contract): its zod
 * schema and a validator that reports every problem, each naming the field and the rule. Accepts the
 * agent-device manifest unchanged. Pure: no I/O.
 *
 * Unknown fields are kept in the normalised output for forward compatibility, but they are NEVER
 * trusted: nothing in the bridge may read a field this module does not validate. Known fields are
 * normalised: `sha256` and `signingCertSha256` trimmed and lower-cased, `installArgs` copied.
 */
import { z } from 'zod';
import { describeValue, typeName } from '../describe-value.ts';
import type { FieldError } from '../errors.ts';
import { isJavaComponent, isJavaPackageName, resolveComponent } from '../protocol/android/java-names.ts';
import { apkUrlProblem, isAllowedApkUrl } from './apk-url.ts';
import { INSTALL_FLAGS, validateInstallArgs } from './install-args.ts';
import { isSemver, MAX_SEMVER_LENGTH, SEMVER_RE } from './semver.ts';
import { normalizeSha256 } from './sha256.ts';

/**
 * A helper name: lowercase slug of 1-64 characters, letter/digit at both ends, no `..`. The one rule:
 * routes, publishing and the manifest validator all use this pattern (or `isHelperName`).
 */
export const HELPER_NAME_RE = /^(?!.*\.\.)[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;
export const HELPER_NAME_RULE =
  'must be a lowercase slug: 1-64 of a-z 0-9 . _ -, starting and ending with a letter or digit, no ".."';
/** `releaseTag`, `outputFormat`, `statusProtocol` of other helpers: a short token, no `..`. */
export const SAFE_TOKEN_RE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;
/** `assetName`, `checksumName`: a plain file name (no `/`, `\`, NUL, spaces), no `..`. */
export const SAFE_FILE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$/;

export const MAX_VERSION_CODE = 2 ** 31 - 1;
export const MIN_SDK_LEVEL = 1;
export const MAX_SDK_LEVEL = 1000;

export const SNAPSHOT_HELPER_NAME = 'android-snapshot-helper';

/**
 * What a manifest describes (`kind`): an instrumentation APK (the default when `kind` is absent, so
 * today's and agent-device's manifests stay valid), an AccessibilityService APK, or an
 * `app_process` dex jar. This module validates the instrumentation kind; `kinds.ts` the others.
 */
export const MANIFEST_KINDS = [
  'instrumentation-apk',
  'accessibility-service-apk',
  'app-process-jar',
] as const;
export type ManifestKind = (typeof MANIFEST_KINDS)[number];
export function isManifestKind(v: unknown): v is ManifestKind {
  return typeof v === 'string' && (MANIFEST_KINDS as readonly string[]).includes(v);
}
export const DEFAULT_MANIFEST_KIND: ManifestKind = 'instrumentation-apk';
export const SNAPSHOT_OUTPUT_FORMAT = 'uiautomator-xml';
export const SNAPSHOT_STATUS_PROTOCOL = 'android-snapshot-helper-v1';

export function isHelperName(s: unknown): s is string {
  return typeof s === 'string' && HELPER_NAME_RE.test(s);
}

export function isSafeToken(s: unknown): s is string {
  return typeof s === 'string' && SAFE_TOKEN_RE.test(s) && !s.includes('..');
}

export function isSafeFileName(s: unknown): s is string {
  return typeof s === 'string' && SAFE_FILE_NAME_RE.test(s) && !s.includes('..');
}

/** A safe file name ending in `.apk` or `.jar`. */
export function isSafeAssetName(s: unknown): s is string {
  return isSafeFileName(s) && /\.(?:apk|jar)$/.test(s);
}

export const RULES = {
  name: HELPER_NAME_RULE,
  version: 'must be a semantic version (semver 2.0, e.g. 1.2.3 or 1.2.3-rc.1, no leading "v")',
  token:
    'must be a token of letters, digits, ".", "_", "+", "-" (1-128 characters, starting with a letter or digit, no "..")',
  fileName:
    'must be a plain file name of letters, digits, ".", "_", "+", "-" (no "/", "\\", "..", NUL or spaces; at most 255 characters)',
  assetName:
    'must be a plain file name ending in ".apk" or ".jar" (letters, digits, ".", "_", "+", "-"; no "/", "\\", "..", NUL or spaces)',
  sha256: 'must be 64 hexadecimal characters',
  packageName:
    'must be a Java package name: at least two dot-separated identifiers [A-Za-z_][A-Za-z0-9_]*, none a Java keyword',
  component:
    'must be a component name "package/.Class" or "package/full.Class" (Java identifiers only; no shell metacharacters)',
} as const;

const sha256String = z
  .string()
  .refine((s) => normalizeSha256(s) !== null, RULES.sha256)
  .meta({ description: '64 hex characters; normalised to lower case with surrounding whitespace trimmed' });
const sdkLevel = z.int().min(MIN_SDK_LEVEL).max(MAX_SDK_LEVEL);
const safeToken = z.string().refine(isSafeToken, RULES.token);

/**
 * The manifest as a zod v4 object, for request schemas and the OpenAPI document. Field rules match
 * `validateManifest` (a property test holds them to the same verdict); use `validateManifest` for
 * error messages and the normalised form. Unknown keys pass through (`looseObject`) and are never
 * trusted.
 */
export const HelperManifestSchema = z
  .looseObject({
    kind: z
      .literal(DEFAULT_MANIFEST_KIND)
      .optional()
      .meta({ description: 'instrumentation-apk (the default when absent)' }),
    name: z.string().refine(isHelperName, RULES.name).meta({ description: 'helper name, a lowercase slug' }),
    version: z.string().max(MAX_SEMVER_LENGTH).regex(SEMVER_RE, RULES.version),
    releaseTag: safeToken.optional(),
    assetName: z.string().refine(isSafeAssetName, RULES.assetName).optional(),
    apkUrl: z
      .string()
      .refine(isAllowedApkUrl, 'must be an https: URL (http: only on loopback) without credentials')
      .nullable()
      .meta({ description: 'https: URL (http: only on a loopback host), or null for a bundled artifact' }),
    sha256: sha256String,
    checksumName: z.string().refine(isSafeFileName, RULES.fileName).optional(),
    sizeBytes: z.int().min(0).optional(),
    signingCertSha256: sha256String.optional(),
    packageName: z.string().refine(isJavaPackageName, RULES.packageName),
    versionCode: z.int().min(1).max(MAX_VERSION_CODE),
    instrumentationRunner: z.string().refine(isJavaComponent, RULES.component),
    minSdk: sdkLevel,
    targetSdk: sdkLevel,
    outputFormat: safeToken.optional(),
    statusProtocol: safeToken.optional(),
    installArgs: z
      .tuple([z.literal('install')], z.enum(INSTALL_FLAGS))
      .refine((a) => validateInstallArgs(a).length === 0, 'each flag may appear at most once')
      .meta({
        description: '"install" followed by any of -r -t -d -g, each at most once; the APK path is appended',
      }),
  })
  .superRefine((m, ctx) => {
    for (const e of [...snapshotHelperErrors(m), ...relationErrors(m)]) {
      ctx.addIssue({ code: 'custom', path: [e.path], message: e.message });
    }
  });

export type HelperManifest = z.output<typeof HelperManifestSchema>;

export type ManifestValidation =
  | { valid: true; manifest: HelperManifest; errors: [] }
  | { valid: false; manifest: null; errors: FieldError[] };

type Check = (value: unknown, path: string) => FieldError[];

export interface FieldSpec {
  key: string;
  required: boolean;
  nullable?: boolean;
  check: Check;
  normalize?: (value: unknown) => unknown;
}

/** Each spec's rule applied to its field: required fields present, nullable ones may be null. */
export function fieldErrors(
  input: Record<string, unknown>,
  specs: readonly FieldSpec[],
  skip: (key: string) => boolean = () => false,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const spec of specs) {
    if (skip(spec.key)) continue;
    const value = Object.hasOwn(input, spec.key) ? input[spec.key] : undefined;
    if (value === undefined) {
      if (spec.required)
        errors.push({ path: spec.key, message: spec.nullable ? 'is required (may be null)' : 'is required' });
      continue;
    }
    if (value === null && spec.nullable) continue;
    errors.push(...spec.check(value, spec.key));
  }
  return errors;
}

export function one(path: string, message: string): FieldError[] {
  return [{ path, message }];
}

export function stringRule(rule: string, accept: (s: string) => boolean): Check {
  return (v, path) => {
    if (typeof v !== 'string') return one(path, `must be a string (got ${typeName(v)})`);
    return accept(v) ? [] : one(path, `${rule} (got ${describeValue(v)})`);
  };
}

export function integerRule(min: number, max: number): Check {
  return (v, path) => {
    if (typeof v === 'string') {
      return one(path, `must be a JSON number, not a string (got ${describeValue(v)})`);
    }
    if (typeof v !== 'number') return one(path, `must be an integer (got ${typeName(v)})`);
    if (!Number.isInteger(v)) return one(path, `must be an integer (got ${describeValue(v)})`);
    if (v < min || v > max) return one(path, `must be between ${min} and ${max} (got ${v})`);
    return [];
  };
}

export const sha256Check = stringRule(RULES.sha256, (s) => normalizeSha256(s) !== null);
export const normalizeDigest = (v: unknown) => normalizeSha256(v as string);

/** `kind` of an instrumentation manifest: absent or "instrumentation-apk". */
function instrumentationKindCheck(v: unknown, path: string): FieldError[] {
  if (v === DEFAULT_MANIFEST_KIND) return [];
  if (typeof v === 'string' && (MANIFEST_KINDS as readonly string[]).includes(v)) {
    return one(
      path,
      `is "${v}", but this needs an "${DEFAULT_MANIFEST_KIND}" manifest (the default when kind is absent)`,
    );
  }
  return one(
    path,
    `must be one of ${MANIFEST_KINDS.map((k) => `"${k}"`).join(', ')} (got ${describeValue(v)})`,
  );
}

export const FIELDS: readonly FieldSpec[] = [
  { key: 'kind', required: false, check: instrumentationKindCheck },
  { key: 'name', required: true, check: stringRule(RULES.name, isHelperName) },
  { key: 'version', required: true, check: stringRule(RULES.version, isSemver) },
  { key: 'releaseTag', required: false, check: stringRule(RULES.token, isSafeToken) },
  { key: 'assetName', required: false, check: stringRule(RULES.assetName, isSafeAssetName) },
  {
    key: 'apkUrl',
    required: true,
    nullable: true,
    check: (v, path) => {
      if (typeof v !== 'string') return one(path, `must be a string or null (got ${typeName(v)})`);
      const problem = apkUrlProblem(v);
      return problem === null ? [] : one(path, problem);
    },
  },
  { key: 'sha256', required: true, check: sha256Check, normalize: normalizeDigest },
  { key: 'checksumName', required: false, check: stringRule(RULES.fileName, isSafeFileName) },
  { key: 'sizeBytes', required: false, check: integerRule(0, Number.MAX_SAFE_INTEGER) },
  { key: 'signingCertSha256', required: false, check: sha256Check, normalize: normalizeDigest },
  { key: 'packageName', required: true, check: stringRule(RULES.packageName, isJavaPackageName) },
  { key: 'versionCode', required: true, check: integerRule(1, MAX_VERSION_CODE) },
  { key: 'instrumentationRunner', required: true, check: stringRule(RULES.component, isJavaComponent) },
  { key: 'minSdk', required: true, check: integerRule(MIN_SDK_LEVEL, MAX_SDK_LEVEL) },
  { key: 'targetSdk', required: true, check: integerRule(MIN_SDK_LEVEL, MAX_SDK_LEVEL) },
  { key: 'outputFormat', required: false, check: stringRule(RULES.token, isSafeToken) },
  { key: 'statusProtocol', required: false, check: stringRule(RULES.token, isSafeToken) },
  {
    key: 'installArgs',
    required: true,
    check: validateInstallArgs,
    normalize: (v) => [...(v as string[])],
  },
];

/** Every field this module knows and validates; any other key is kept but never trusted. */
export const KNOWN_MANIFEST_FIELDS: readonly string[] = FIELDS.map((f) => f.key);

/** The fields whose value is fixed for the snapshot helper (checked instead of the token rule). */
const SNAPSHOT_FIXED: Readonly<Record<string, string>> = {
  outputFormat: SNAPSHOT_OUTPUT_FORMAT,
  statusProtocol: SNAPSHOT_STATUS_PROTOCOL,
};

function snapshotHelperErrors(m: Record<string, unknown>): FieldError[] {
  if (m['name'] !== SNAPSHOT_HELPER_NAME) return [];
  const errors: FieldError[] = [];
  for (const [key, expected] of Object.entries(SNAPSHOT_FIXED)) {
    const v = m[key];
    if (v === undefined) {
      errors.push({
        path: key,
        message: `is required for ${SNAPSHOT_HELPER_NAME} and must be "${expected}"`,
      });
    } else if (v !== expected) {
      errors.push({
        path: key,
        message: `must be "${expected}" for ${SNAPSHOT_HELPER_NAME} (got ${describeValue(v)})`,
      });
    }
  }
  return errors;
}

/** Rules between fields, checked only when the fields involved are individually valid. */
function relationErrors(m: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const { minSdk, targetSdk, packageName, instrumentationRunner } = m;
  if (
    integerRule(1, MAX_SDK_LEVEL)(minSdk, '').length === 0 &&
    integerRule(1, MAX_SDK_LEVEL)(targetSdk, '').length === 0
  ) {
    if ((minSdk as number) > (targetSdk as number)) {
      errors.push({ path: 'minSdk', message: `must be <= targetSdk (${minSdk} > ${targetSdk})` });
    }
  }
  if (isJavaPackageName(packageName) && isJavaComponent(instrumentationRunner)) {
    const runnerPackage = resolveComponent(instrumentationRunner).packageName;
    if (runnerPackage !== packageName) {
      errors.push({
        path: 'instrumentationRunner',
        message: `must belong to packageName "${packageName}" (the installed APK), got package "${runnerPackage}"`,
      });
    }
  }
  return errors;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Validate a parsed manifest and collect every problem. On success `manifest` is the normalised copy
 * (unknown fields kept as they are, never trusted); on failure `manifest` is null and each error has a
 * dotted `path` (`""` for the document itself) and a `message` naming the rule. Never throws.
 */
export function validateManifest(input: unknown): ManifestValidation {
  if (!isRecord(input)) {
    return {
      valid: false,
      manifest: null,
      errors: one('', `manifest must be a JSON object (got ${typeName(input)})`),
    };
  }
  const errors: FieldError[] = [];
  const isSnapshotHelper = input['name'] === SNAPSHOT_HELPER_NAME;
  errors.push(...fieldErrors(input, FIELDS, (key) => isSnapshotHelper && key in SNAPSHOT_FIXED));
  errors.push(...snapshotHelperErrors(input), ...relationErrors(input));
  if (errors.length > 0) return { valid: false, manifest: null, errors };

  const byKey = new Map(FIELDS.map((f) => [f.key, f]));
  const entries = Object.entries(input).map(([key, value]): [string, unknown] => {
    const normalize = byKey.get(key)?.normalize;
    return [key, normalize !== undefined && value !== undefined && value !== null ? normalize(value) : value];
  });
  // Object.fromEntries defines own properties, so a "__proto__" key stays an inert own field.
  return { valid: true, manifest: Object.fromEntries(entries) as HelperManifest, errors: [] };
}
