/**
 * Release manifests of the kinds beside the instrumentation APK (`schema.ts`): the glass
 * companions. `validateReleaseManifest` dispatches on `kind` (absent = "instrumentation-apk", so
 * today's manifests and agent-device's are unchanged) and, like `validateManifest`, reports every
 * problem with its field and rule, keeps unknown fields (never trusted) and never throws.
 *
 * - `app-process-jar` (the glass agent): a dex jar pushed to `devicePath` under /data/local/tmp and
 *   started with `CLASSPATH=<devicePath> app_process / <mainClass>`; it listens on
 *   `localabstract:<socketName>`. It is never installed, so `installArgs`, `packageName` and
 *   `instrumentationRunner` must be absent.
 * - `accessibility-service-apk` (the glass a11y service): an installed APK (same `installArgs`
 *   allowlist) whose `serviceComponent` is enabled in secure settings; it listens on
 *   `localabstract:<socketName>`. No `instrumentationRunner`.
 */

import { describeValue } from '../describe-value.ts';
import type { FieldError } from '../errors.ts';
import { isJavaComponent, isJavaPackageName, resolveComponent } from '../protocol/android/java-names.ts';
import { validateInstallArgs } from './install-args.ts';
import {
  FIELDS,
  type FieldSpec,
  fieldErrors,
  type HelperManifest,
  integerRule,
  isRecord,
  isSafeFileName,
  KNOWN_MANIFEST_FIELDS,
  MANIFEST_KINDS,
  MAX_SDK_LEVEL,
  MAX_VERSION_CODE,
  MIN_SDK_LEVEL,
  one,
  RULES,
  stringRule,
  validateManifest,
} from './schema.ts';

/** A localabstract socket name: 1-64 of a-z 0-9 . _ -, starting with a letter or digit, no "..". */
export const SOCKET_NAME_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** Where an app_process jar lives on the device: a plain `.jar` file name directly under /data/local/tmp. */
export const DEVICE_JAR_DIR = '/data/local/tmp/';

export function isSocketName(s: unknown): s is string {
  return typeof s === 'string' && SOCKET_NAME_RE.test(s) && !s.includes('..');
}

export function isDeviceJarPath(s: unknown): s is string {
  if (typeof s !== 'string' || !s.startsWith(DEVICE_JAR_DIR)) return false;
  const file = s.slice(DEVICE_JAR_DIR.length);
  return isSafeFileName(file) && file.endsWith('.jar');
}

interface Common {
  name: string;
  version: string;
  apkUrl: string | null;
  sha256: string;
  releaseTag?: string;
  assetName?: string;
  checksumName?: string;
  sizeBytes?: number;
  [unknown: string]: unknown;
}

export interface AppProcessJarManifest extends Common {
  kind: 'app-process-jar';
  mainClass: string;
  socketName: string;
  devicePath: string;
  minSdk?: number;
}

export interface AccessibilityServiceManifest extends Common {
  kind: 'accessibility-service-apk';
  packageName: string;
  versionCode: number;
  minSdk: number;
  targetSdk: number;
  installArgs: string[];
  serviceComponent: string;
  socketName: string;
  signingCertSha256?: string;
}

export type ReleaseManifest = HelperManifest | AppProcessJarManifest | AccessibilityServiceManifest;

/** The kinds that are installed APKs (ensure installs them the same way). */
export type InstallableApkManifest = HelperManifest | AccessibilityServiceManifest;

export type ReleaseManifestValidation =
  | { valid: true; manifest: ReleaseManifest; errors: [] }
  | { valid: false; manifest: null; errors: FieldError[] };

const SOCKET_RULE =
  'must be a localabstract socket name: 1-64 of a-z 0-9 . _ -, starting with a letter or digit, no ".."';
const byKey = new Map(FIELDS.map((f) => [f.key, f]));
const shared = (key: string, required?: boolean): FieldSpec => {
  const spec = byKey.get(key) as FieldSpec;
  return required === undefined ? spec : { ...spec, required };
};
const COMMON = ['name', 'version', 'releaseTag', 'apkUrl', 'sha256', 'checksumName', 'sizeBytes'].map((k) =>
  shared(k),
);
const assetName = (ext: '.apk' | '.jar'): FieldSpec => ({
  key: 'assetName',
  required: false,
  check: stringRule(
    `must be a plain file name ending in "${ext}"`,
    (s) => isSafeFileName(s) && s.endsWith(ext),
  ),
});
const socketName: FieldSpec = {
  key: 'socketName',
  required: true,
  check: stringRule(SOCKET_RULE, isSocketName),
};

const JAR_FIELDS: readonly FieldSpec[] = [
  ...COMMON,
  assetName('.jar'),
  {
    key: 'mainClass',
    required: true,
    check: stringRule(
      'must be a fully qualified Java class name (at least two identifiers)',
      isJavaPackageName,
    ),
  },
  socketName,
  {
    key: 'devicePath',
    required: true,
    check: stringRule(
      `must be a plain ".jar" file name directly under ${DEVICE_JAR_DIR} (no "..", "/", spaces or NUL in the name)`,
      isDeviceJarPath,
    ),
  },
  { key: 'minSdk', required: false, check: integerRule(MIN_SDK_LEVEL, MAX_SDK_LEVEL) },
];
/** Fields that would make a consumer install or instrument something a jar is not. */
const JAR_ABSENT = ['installArgs', 'packageName', 'instrumentationRunner', 'versionCode'];

const A11Y_FIELDS: readonly FieldSpec[] = [
  ...COMMON,
  assetName('.apk'),
  shared('signingCertSha256'),
  shared('packageName'),
  { key: 'versionCode', required: true, check: integerRule(1, MAX_VERSION_CODE) },
  shared('minSdk'),
  shared('targetSdk'),
  { key: 'installArgs', required: true, check: validateInstallArgs, normalize: (v) => [...(v as string[])] },
  { key: 'serviceComponent', required: true, check: stringRule(RULES.component, isJavaComponent) },
  socketName,
];
const A11Y_ABSENT = ['instrumentationRunner', 'mainClass', 'devicePath'];

const KNOWN_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'app-process-jar': ['kind', ...JAR_FIELDS.map((f) => f.key)],
  'accessibility-service-apk': ['kind', ...A11Y_FIELDS.map((f) => f.key)],
};

/** The fields a manifest of this kind defines (absent or unknown kind: the instrumentation APK's). */
export function knownFieldsOf(kind: unknown): readonly string[] {
  return (typeof kind === 'string' ? KNOWN_FIELDS[kind] : undefined) ?? KNOWN_MANIFEST_FIELDS;
}

function checkFields(
  input: Record<string, unknown>,
  specs: readonly FieldSpec[],
  absent: readonly string[],
  kind: string,
): FieldError[] {
  const errors = fieldErrors(input, specs);
  for (const key of absent) {
    if (Object.hasOwn(input, key)) errors.push({ path: key, message: `must be absent for kind "${kind}"` });
  }
  return errors;
}

function normalized(input: Record<string, unknown>, specs: readonly FieldSpec[]): Record<string, unknown> {
  const specOf = new Map(specs.map((f) => [f.key, f]));
  return Object.fromEntries(
    Object.entries(input).map(([key, value]): [string, unknown] => {
      const normalize = specOf.get(key)?.normalize;
      return [
        key,
        normalize !== undefined && value !== undefined && value !== null ? normalize(value) : value,
      ];
    }),
  );
}

/** Validate a manifest of any kind. Never throws. */
export function validateReleaseManifest(input: unknown): ReleaseManifestValidation {
  // What is not an object, and the default kind, are the instrumentation validator's to judge.
  if (!isRecord(input) || input['kind'] === undefined || input['kind'] === 'instrumentation-apk') {
    return validateManifest(input);
  }
  const kind = input['kind'];
  let errors: FieldError[];
  let specs: readonly FieldSpec[];
  if (kind === 'app-process-jar') {
    specs = JAR_FIELDS;
    errors = checkFields(input, specs, JAR_ABSENT, kind);
  } else if (kind === 'accessibility-service-apk') {
    specs = A11Y_FIELDS;
    errors = checkFields(input, specs, A11Y_ABSENT, kind);
    const { packageName, serviceComponent, minSdk, targetSdk } = input;
    if (isJavaPackageName(packageName) && isJavaComponent(serviceComponent)) {
      const owner = resolveComponent(serviceComponent).packageName;
      if (owner !== packageName) {
        errors.push({
          path: 'serviceComponent',
          message: `must belong to packageName "${packageName}" (the installed APK), got package "${owner}"`,
        });
      }
    }
    if (typeof minSdk === 'number' && typeof targetSdk === 'number' && minSdk > targetSdk) {
      errors.push({ path: 'minSdk', message: `must be <= targetSdk (${minSdk} > ${targetSdk})` });
    }
  } else {
    return {
      valid: false,
      manifest: null,
      errors: one(
        'kind',
        `must be one of ${MANIFEST_KINDS.map((k) => `"${k}"`).join(', ')} (got ${describeValue(kind)})`,
      ),
    };
  }
  if (errors.length > 0) return { valid: false, manifest: null, errors };
  return { valid: true, manifest: normalized(input, specs) as ReleaseManifest, errors: [] };
}
