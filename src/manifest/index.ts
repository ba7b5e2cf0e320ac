/** Public API of the release-manifest model (pure: no I/O). */

export { describeValue, sanitizeForTerminal } from '../describe-value.ts';
export { apkUrlProblem, isAllowedApkUrl, MAX_APK_URL_LENGTH } from './apk-url.ts';
export {
  assertInstallArgs,
  formatFieldErrors,
  INSTALL_FLAGS,
  type InstallFlag,
  MAX_INSTALL_ARGS,
  parseInstallArgsString,
  validateInstallArgs,
} from './install-args.ts';
export {
  type AccessibilityServiceManifest,
  type AppProcessJarManifest,
  DEVICE_JAR_DIR,
  type InstallableApkManifest,
  isDeviceJarPath,
  isSocketName,
  knownFieldsOf,
  type ReleaseManifest,
  type ReleaseManifestValidation,
  SOCKET_NAME_RE,
  validateReleaseManifest,
} from './kinds.ts';
export {
  DEFAULT_MANIFEST_KIND,
  HELPER_NAME_RE,
  HELPER_NAME_RULE,
  type HelperManifest,
  HelperManifestSchema,
  isHelperName,
  isManifestKind,
  isSafeAssetName,
  isSafeFileName,
  isSafeToken,
  KNOWN_MANIFEST_FIELDS,
  MANIFEST_KINDS,
  MAX_SDK_LEVEL,
  MAX_VERSION_CODE,
  type ManifestKind,
  type ManifestValidation,
  MIN_SDK_LEVEL,
  SAFE_FILE_NAME_RE,
  SAFE_TOKEN_RE,
  SNAPSHOT_HELPER_NAME,
  SNAPSHOT_OUTPUT_FORMAT,
  SNAPSHOT_STATUS_PROTOCOL,
  validateManifest,
} from './schema.ts';
export { compareSemver, isSemver, MAX_SEMVER_LENGTH, parseSemver, SEMVER_RE, type Semver } from './semver.ts';
export { normalizeSha256, SHA256_RE } from './sha256.ts';
