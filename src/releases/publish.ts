/**
 * Publishing a helper release: read the APK's own metadata, cross-check it against what the
 * publisher said, upload the content-addressed artifact, then create the manifest (create-only: a
 * published version is immutable). The manifest is the commit point: the checksum file is written
 * from the manifest that won, and the `latest` pointer moves last, forwards only, with a
 * compare-and-swap, so concurrent publishers (threads, processes, machines sharing a store) never
 * leave a checksum that disagrees with its manifest nor move `latest` backwards.
 */
import path from 'node:path';
import { readApkInfo } from '../artifacts/apk-reader.ts';
import { sha256File } from '../artifacts/hash.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { BridgeError, type FieldError } from '../errors.ts';
import {
  assertInstallArgs,
  compareSemver,
  HELPER_NAME_RE,
  HELPER_NAME_RULE,
  type HelperManifest,
  isSemver,
  resolveComponent,
  validateManifest,
} from '../manifest/index.ts';
import { artifactKey, checksumKey, latestKey, manifestKey } from './layout.ts';
import { formatLatestPointer, parseLatestPointer, ReleaseRepository } from './repository.ts';

export const SNAPSHOT_HELPER_NAME = 'android-snapshot-helper';
export const DEFAULT_INSTALL_ARGS = ['install', '-r', '-t'];

export interface PublishRequest {
  apkPath: string;
  version: string;
  name?: string;
  installArgs?: string[];
  /** `pkg/.Class` or `pkg/full.Class`; default: the APK's only declared instrumentation. */
  runner?: string;
  /** A stable public URL for the artifact, when the store has one; otherwise apkUrl is resolved when served. */
  apkUrl?: string | null;
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

export interface PublishResult {
  /** `published`: new version written; `unchanged`: same version with identical bytes already there. */
  status: 'published' | 'unchanged';
  manifest: HelperManifest;
  /** Whether the `latest` pointer now names this version. */
  latest: boolean;
}

function refuse(message: string, errors: FieldError[] = []): BridgeError {
  return new BridgeError('INVALID_ARGUMENT', message, errors.length > 0 ? { details: { errors } } : {});
}

/** Build the manifest for an APK; pure apart from reading the APK. */
async function buildManifest(request: PublishRequest): Promise<HelperManifest> {
  const name = request.name ?? SNAPSHOT_HELPER_NAME;
  if (!HELPER_NAME_RE.test(name)) {
    throw refuse(`name ${JSON.stringify(name)} is not a valid helper name`, [
      { path: 'name', message: HELPER_NAME_RULE },
    ]);
  }
  if (!isSemver(request.version)) {
    throw refuse(`version ${JSON.stringify(request.version)} is not semver`, [
      { path: 'version', message: 'must be a semantic version such as 1.2.3' },
    ]);
  }
  const installArgs = assertInstallArgs(request.installArgs ?? DEFAULT_INSTALL_ARGS);
  const apk = await readApkInfo(request.apkPath);
  const { sha256, size } = await sha256File(request.apkPath);

  if (apk.versionName !== null && apk.versionName !== request.version) {
    throw refuse(
      `version ${request.version} does not match the APK's versionName ${apk.versionName} (${path.basename(request.apkPath)})`,
      [{ path: 'version', message: `APK declares versionName ${apk.versionName}` }],
    );
  }

  let runner: string | undefined;
  if (request.runner !== undefined) {
    let resolved: { packageName: string; className: string };
    try {
      resolved = resolveComponent(request.runner);
    } catch {
      throw refuse(`runner ${JSON.stringify(request.runner)} is not a component (pkg/.Class)`, [
        { path: 'instrumentationRunner', message: 'must be pkg/.Class or pkg/full.Class' },
      ]);
    }
    if (resolved.packageName !== apk.packageName) {
      throw refuse(
        `runner package ${resolved.packageName} does not match the APK's package ${apk.packageName}`,
        [{ path: 'instrumentationRunner', message: `APK package is ${apk.packageName}` }],
      );
    }
    if (!apk.instrumentations.some((i) => i.name === resolved.className)) {
      const declared = apk.instrumentations.map((i) => i.name).join(', ') || 'none';
      throw refuse(`runner class ${resolved.className} is not declared by the APK (declared: ${declared})`, [
        { path: 'instrumentationRunner', message: `APK declares: ${declared}` },
      ]);
    }
    runner = shortComponent(apk.packageName, resolved.className);
  } else if (apk.instrumentations.length === 1) {
    runner = shortComponent(apk.packageName, apk.instrumentations[0]!.name);
  } else if (apk.instrumentations.length > 1) {
    throw refuse(
      `the APK declares ${apk.instrumentations.length} instrumentations; choose one with --runner`,
      [{ path: 'instrumentationRunner', message: 'ambiguous: pass the runner explicitly' }],
    );
  }
  if (name === SNAPSHOT_HELPER_NAME && runner === undefined) {
    throw refuse('the snapshot helper APK declares no instrumentation', [
      { path: 'instrumentationRunner', message: 'required for the snapshot helper' },
    ]);
  }

  const assetName = `${name}-${request.version}.apk`;
  const candidate: Record<string, unknown> = {
    name,
    version: request.version,
    releaseTag: `v${request.version}`,
    assetName,
    apkUrl: request.apkUrl ?? null,
    sha256,
    checksumName: `${assetName}.sha256`,
    packageName: apk.packageName,
    versionCode: apk.versionCode,
    ...(runner === undefined ? {} : { instrumentationRunner: runner }),
    minSdk: apk.minSdk ?? 1,
    targetSdk: apk.targetSdk ?? apk.minSdk ?? 1,
    ...(name === SNAPSHOT_HELPER_NAME
      ? { outputFormat: 'uiautomator-xml', statusProtocol: 'android-snapshot-helper-v1' }
      : {}),
    installArgs,
    sizeBytes: size,
    ...(apk.signerCertSha256[0] === undefined ? {} : { signingCertSha256: apk.signerCertSha256[0] }),
  };
  const verdict = validateManifest(candidate);
  if (!verdict.valid) throw refuse('the release would produce an invalid manifest', verdict.errors);
  return verdict.manifest;
}

function shortComponent(packageName: string, className: string): string {
  return className.startsWith(`${packageName}.`)
    ? `${packageName}/${className.slice(packageName.length)}`
    : `${packageName}/${className}`;
}

function sameRelease(a: HelperManifest, b: HelperManifest): boolean {
  return a.sha256 === b.sha256;
}

function conflict(existing: HelperManifest): BridgeError {
  return new BridgeError(
    'CONFLICT',
    `${existing.name} ${existing.version} is already published with different bytes (sha256 ${existing.sha256}); a published version is immutable`,
    {
      retryable: false,
      details: { name: existing.name, version: existing.version, sha256: existing.sha256 },
    },
  );
}

export async function publishRelease(store: ArtifactStore, request: PublishRequest): Promise<PublishResult> {
  const manifest = await buildManifest(request);
  const repo = new ReleaseRepository(store);
  const { name, version } = manifest;

  const existing = await repo.getManifest(name, version);
  if (existing !== null) {
    if (!sameRelease(existing, manifest)) throw conflict(existing);
    // Same bytes: finish what a publisher that stopped after the commit point may have left undone.
    return { status: 'unchanged', manifest: existing, latest: await completeRelease(store, existing) };
  }

  // 1. The artifact (content-addressed: identical bytes are already there under the same key; a
  //    losing publisher leaves at most an unreferenced blob, never a visible inconsistency).
  const key = artifactKey(manifest.sha256);
  const present = await store.stat(key);
  if (present === null || present.size !== manifest.sizeBytes) {
    await store.putFile(key, request.apkPath, {
      contentType: 'application/vnd.android.package-archive',
      ...(request.onProgress ? { onProgress: request.onProgress } : {}),
    });
  } else {
    request.onProgress?.(present.size, present.size);
  }

  // 2. The manifest, create-only: the commit point. Exactly one concurrent publisher of a version
  //    creates it; everything after is derived from the manifest that won, read back from the store
  //    (which also catches a store whose create-only write is not atomic).
  const created = await store.putIfAbsent(
    manifestKey(name, version),
    `${JSON.stringify(manifest, null, 2)}\n`,
    {
      contentType: 'application/json',
    },
  );
  const winner = await repo.getManifest(name, version);
  if (winner === null) {
    throw new BridgeError(
      'UNAVAILABLE',
      `the manifest of ${name} ${version} is not visible after writing it`,
      {
        retryable: true,
      },
    );
  }
  if (!sameRelease(winner, manifest)) throw conflict(winner);
  return {
    status: created ? 'published' : 'unchanged',
    manifest: winner,
    latest: await completeRelease(store, winner),
  };
}

/**
 * Everything after the commit point, derived from the committed manifest only and idempotent, so
 * any publisher of the same bytes (the winner, a racer, a retry after a crash) may run it: the
 * checksum file, then `latest`. Resolves whether `latest` names this version.
 */
async function completeRelease(store: ArtifactStore, manifest: HelperManifest): Promise<boolean> {
  const { name, version } = manifest;
  const assetName = manifest.assetName ?? name;
  const checksumName = manifest.checksumName ?? `${assetName}.sha256`;
  const checksum = `${manifest.sha256}  ${assetName}\n`;
  const key = checksumKey(name, version, checksumName);
  if ((await store.get(key))?.toString('utf8') !== checksum) {
    await store.put(key, checksum, { contentType: 'text/plain; charset=utf-8' });
  }
  return advanceLatest(store, name, version);
}

const LATEST_CAS_ATTEMPTS = 100;

/**
 * Move `latest` to `version` unless it already names the same or a higher version, with a
 * compare-and-swap on the pointer's ETag: a concurrent publisher that moved it in between makes
 * the swap fail, and the decision is taken again on what it wrote. Never moves backwards.
 */
async function advanceLatest(store: ArtifactStore, name: string, version: string): Promise<boolean> {
  const key = latestKey(name);
  for (let attempt = 0; attempt < LATEST_CAS_ATTEMPTS; attempt++) {
    const current = await store.getVersioned(key);
    const currentVersion = current === null ? null : parseLatestPointer(current.body, name);
    if (currentVersion !== null && compareSemver(version, currentVersion) <= 0) {
      return currentVersion === version;
    }
    const swapped = await store.putIfMatch(key, formatLatestPointer(version), current?.etag ?? null, {
      contentType: 'application/json',
    });
    if (swapped !== null) return true;
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * (5 + attempt))));
  }
  throw new BridgeError(
    'UNAVAILABLE',
    `could not move the latest pointer of ${name} to ${version}: it kept changing under ${LATEST_CAS_ATTEMPTS} attempts`,
    { retryable: true },
  );
}
