/**
 * APK metadata: package, versions, SDK levels, test-only/debuggable flags, instrumentations and
 * signer certificate digests. `apkInfoReads` is the pure parser, reading the APK by ranges;
 * `parseApkInfo` runs it over bytes in memory, artifacts/apk-file.ts's `readApkInfo` over a file
 * (reading only the ranges asked for).
 *
 * The signer digests are what the APK *claims*; signatures are not verified here (the device's
 * package manager verifies them on install). Corrupted or truncated input always yields
 * `BridgeError('INVALID_ARGUMENT', 'not a valid APK: <reason>')`.
 */
import { isBridgeError } from '../../errors.ts';
import { type ManifestInfo, parseBinaryManifest } from './apk-manifest.ts';
import { signerCertSha256Reads } from './apk-signing.ts';
import {
  findZipEntry,
  invalidApk,
  type RangeReads,
  readFromBytes,
  zipDirectoryReads,
  zipEntryReads,
} from './apk-zip.ts';

export interface ApkInstrumentation {
  /** Fully qualified class name (`.Foo` in the manifest is resolved against the package). */
  name: string;
  targetPackage: string;
}

/**
 * What the binary AndroidManifest says (versionCode is 0 when absent, as on Android; SDK levels are
 * null when absent or a preview codename), plus the signer certificates.
 */
export interface ApkInfo extends ManifestInfo {
  /**
   * sha256 (lower hex) of each signer's certificate DER, as `apksigner verify --print-certs` prints
   * "certificate SHA-256 digest". From the v2 signature scheme block if present, else v3, else the
   * v1 META-INF PKCS#7 files; [] when unsigned.
   */
  signerCertSha256: string[];
}

/** Largest AndroidManifest.xml we decode; real ones are a few hundred KB at most. */
const MAX_MANIFEST_BYTES = 8 << 20;

/**
 * An APK's metadata read by ranges (see apk-zip.ts `RangeReads`): the ZIP directory from the end of
 * the archive, AndroidManifest.xml, and the signing block or v1 signature files — nothing else.
 */
export function* apkInfoReads(size: number): RangeReads<ApkInfo> {
  try {
    const directory = yield* zipDirectoryReads(size);
    const entry = findZipEntry(directory, 'AndroidManifest.xml');
    if (entry === undefined) throw invalidApk('no AndroidManifest.xml entry');
    const manifest = parseBinaryManifest(yield* zipEntryReads(directory, entry, MAX_MANIFEST_BYTES));
    return { ...manifest, signerCertSha256: yield* signerCertSha256Reads(directory) };
  } catch (error) {
    if (isBridgeError(error)) throw error;
    // Defence in depth: no parser error of any other kind may escape.
    throw invalidApk((error as Error)?.message ?? String(error), error);
  }
}

/** `apkInfoReads` over an APK held whole in memory. */
export function parseApkInfo(bytes: Uint8Array): ApkInfo {
  return readFromBytes(bytes, apkInfoReads);
}

/**
 * True when both APKs are signed by the same signer set (Android's update rule for APKs without
 * key rotation). Unsigned APKs match nothing.
 */
export function apkSignerMatches(a: ApkInfo, b: ApkInfo): boolean {
  if (a.signerCertSha256.length === 0 || b.signerCertSha256.length === 0) return false;
  const left = new Set(a.signerCertSha256.map((digest) => digest.toLowerCase()));
  const right = new Set(b.signerCertSha256.map((digest) => digest.toLowerCase()));
  return left.size === right.size && [...left].every((digest) => right.has(digest));
}
