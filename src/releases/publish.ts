/**
 * Publishing a helper release: read the APK's own metadata, cross-check it against what the
 * publisher said, upload the content-addressed artifact, then create the manifest (create-only: a
 * published version is immutable). The manifest is the commit point: the checksum file is written
 * from the manifest that won, and the `latest` pointer moves last, forwards only, with a
 * compare-and-swap, so concurrent publishers (threads, processes, machines sharing a store) never
 * leave a checksum that disagrees with its manifest nor move `latest` backwards.
 */
import path from 'node:path';
import { readApkInfo, readDexJar } from '../artifacts/apk-file.ts';
import { type FileDigest, sha256File } from '../artifacts/hash.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { BridgeError, type FieldError } from '../errors.ts';
import {
  assertInstallArgs,
  compareSemver,
  DEVICE_JAR_DIR,
  HELPER_NAME_RE,
  HELPER_NAME_RULE,
  isManifestKind,
  isSemver,
  MANIFEST_KINDS,
  type ManifestKind,
  type ReleaseManifest,
  validateReleaseManifest,
} from '../manifest/index.ts';
import {
  BIND_ACCESSIBILITY_SERVICE,
  isJavaComponent,
  resolveComponent,
} from '../protocol/android/java-names.ts';
import type { ApkInfo } from '../protocol/apk/apk-reader.ts';
import { artifactKey, checksumKey, latestKey, manifestKey } from './layout.ts';
import { formatLatestPointer, latestMoved, parseLatestPointer, ReleaseRepository } from './repository.ts';

export const SNAPSHOT_HELPER_NAME = 'android-snapshot-helper';
export const DEFAULT_INSTALL_ARGS = ['install', '-r', '-t'];

export interface PublishRequest {
  /** The artifact: an APK, or a dex jar for kind `app-process-jar`. */
  apkPath: string;
  /** The artifact's sha256 and size when the caller hashed it already (an upload, while it was written). */
  digest?: FileDigest;
  version: string;
  name?: string;
  /** What the artifact is (default `instrumentation-apk`; see src/manifest/kinds.ts). */
  kind?: ManifestKind;
  /** APK kinds only (default `install -r -t`). */
  installArgs?: string[];
  /** `pkg/.Class` or `pkg/full.Class`; default: the APK's only declared instrumentation. */
  runner?: string;
  /** `app-process-jar`: the class `app_process` starts (must be defined by the jar's dex). */
  mainClass?: string;
  /** Both glass kinds: the `localabstract:` socket the component listens on. */
  socketName?: string;
  /** `app-process-jar`: where the jar is pushed (default `/data/local/tmp/<name>.jar`). */
  devicePath?: string;
  /** `accessibility-service-apk`: `pkg/.Class`; default: the APK's only accessibility service. */
  serviceComponent?: string;
  /** A stable public URL for the artifact, when the store has one; otherwise apkUrl is resolved when served. */
  apkUrl?: string | null;
  onProgress?: (sentBytes: number, totalBytes: number) => void;
}

export interface PublishResult {
  /** `published`: new version written; `unchanged`: same version with identical bytes already there. */
  status: 'published' | 'unchanged';
  manifest: ReleaseManifest;
  /** Whether the `latest` pointer now names this version. */
  latest: boolean;
}

function refuse(message: string, errors: FieldError[] = []): BridgeError {
  return new BridgeError('INVALID_ARGUMENT', message, errors.length > 0 ? { details: { errors } } : {});
}

/** Fields a kind does not take: giving one is a mistake the publisher should hear about. */
const NOT_FOR_KIND: Record<ManifestKind, Array<keyof PublishRequest>> = {
  'instrumentation-apk': ['mainClass', 'socketName', 'devicePath', 'serviceComponent'],
  'app-process-jar': ['installArgs', 'runner', 'serviceComponent'],
  'accessibility-service-apk': ['runner', 'mainClass', 'devicePath'],
};

/** Build the manifest for an artifact; pure apart from reading the artifact. */
async function buildManifest(request: PublishRequest): Promise<ReleaseManifest> {
  const name = request.name ?? SNAPSHOT_HELPER_NAME;
  const kind = request.kind ?? 'instrumentation-apk';
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
  if (!isManifestKind(kind)) {
    throw refuse(`kind ${JSON.stringify(kind)} is not a manifest kind`, [
      { path: 'kind', message: `must be one of ${MANIFEST_KINDS.join(', ')}` },
    ]);
  }
  const extra = NOT_FOR_KIND[kind].filter((key) => request[key] !== undefined);
  if (extra.length > 0) {
    throw refuse(
      `${extra.join(', ')} ${extra.length === 1 ? 'does' : 'do'} not apply to a ${kind} release`,
      extra.map((key) => ({ path: key, message: `not used by kind ${kind}` })),
    );
  }
  if (name === SNAPSHOT_HELPER_NAME && kind !== 'instrumentation-apk') {
    throw refuse(`${SNAPSHOT_HELPER_NAME} is an instrumentation APK, not a ${kind}`, [
      { path: 'kind', message: 'must be instrumentation-apk for the snapshot helper' },
    ]);
  }
  const { sha256, size } = request.digest ?? (await sha256File(request.apkPath));
  const ext = kind === 'app-process-jar' ? 'jar' : 'apk';
  const assetName = `${name}-${request.version}.${ext}`;
  const common = {
    kind,
    name,
    version: request.version,
    releaseTag: `v${request.version}`,
    assetName,
    apkUrl: request.apkUrl ?? null,
    sha256,
    checksumName: `${assetName}.sha256`,
  };

  let candidate: Record<string, unknown>;
  if (kind === 'app-process-jar') {
    candidate = { ...common, ...(await jarFields(request, name)), sizeBytes: size };
  } else {
    const installArgs = assertInstallArgs(request.installArgs ?? DEFAULT_INSTALL_ARGS);
    const apk = await readApkInfo(request.apkPath);
    if (apk.versionName !== null && apk.versionName !== request.version) {
      throw refuse(
        `version ${request.version} does not match the APK's versionName ${apk.versionName} (${path.basename(request.apkPath)})`,
        [{ path: 'version', message: `APK declares versionName ${apk.versionName}` }],
      );
    }
    const specific =
      kind === 'accessibility-service-apk'
        ? a11yFields(request, apk)
        : instrumentationFields(request, apk, name);
    candidate = {
      ...common,
      packageName: apk.packageName,
      versionCode: apk.versionCode,
      ...specific,
      minSdk: apk.minSdk ?? 1,
      targetSdk: apk.targetSdk ?? apk.minSdk ?? 1,
      ...(name === SNAPSHOT_HELPER_NAME
        ? { outputFormat: 'uiautomator-xml', statusProtocol: 'android-snapshot-helper-v1' }
        : {}),
      installArgs,
      sizeBytes: size,
      ...(apk.signerCertSha256[0] === undefined ? {} : { signingCertSha256: apk.signerCertSha256[0] }),
    };
  }
  // Today's instrumentation manifests carry no `kind` (it is their default): keep them byte-stable.
  if (kind === 'instrumentation-apk') delete candidate['kind'];
  const verdict = validateReleaseManifest(candidate);
  if (!verdict.valid) throw refuse('the release would produce an invalid manifest', verdict.errors);
  return verdict.manifest;
}

function instrumentationFields(request: PublishRequest, apk: ApkInfo, name: string): Record<string, unknown> {
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
  return runner === undefined ? {} : { instrumentationRunner: runner };
}

/** The accessibility service: the one named (declared with the bind permission) or the APK's only one. */
function a11yFields(request: PublishRequest, apk: ApkInfo): Record<string, unknown> {
  const services = apk.services.filter((s) => s.permission === BIND_ACCESSIBILITY_SERVICE);
  const declared = services.map((s) => s.name).join(', ') || 'none';
  let className: string;
  if (request.serviceComponent !== undefined) {
    if (!isJavaComponent(request.serviceComponent)) {
      throw refuse(`service ${JSON.stringify(request.serviceComponent)} is not a component (pkg/.Class)`, [
        { path: 'serviceComponent', message: 'must be pkg/.Class or pkg/full.Class' },
      ]);
    }
    const resolved = resolveComponent(request.serviceComponent);
    if (resolved.packageName !== apk.packageName) {
      throw refuse(
        `service package ${resolved.packageName} does not match the APK's package ${apk.packageName}`,
        [{ path: 'serviceComponent', message: `APK package is ${apk.packageName}` }],
      );
    }
    if (!services.some((s) => s.name === resolved.className)) {
      throw refuse(
        `service ${resolved.className} is not an accessibility service of the APK (declared with ${BIND_ACCESSIBILITY_SERVICE}: ${declared})`,
        [{ path: 'serviceComponent', message: `APK declares: ${declared}` }],
      );
    }
    className = resolved.className;
  } else if (services.length === 1) {
    className = services[0]!.name;
  } else {
    throw refuse(
      services.length === 0
        ? `the APK declares no accessibility service (a <service> with ${BIND_ACCESSIBILITY_SERVICE})`
        : `the APK declares ${services.length} accessibility services; choose one with --service-component`,
      [{ path: 'serviceComponent', message: `APK declares: ${declared}` }],
    );
  }
  return {
    serviceComponent: shortComponent(apk.packageName, className),
    socketName: requireSocketName(request),
  };
}

async function jarFields(request: PublishRequest, name: string): Promise<Record<string, unknown>> {
  if (request.mainClass === undefined) {
    throw refuse('an app-process-jar release needs its main class (--main-class)', [
      { path: 'mainClass', message: 'required for kind app-process-jar' },
    ]);
  }
  const jar = await readDexJar(request.apkPath);
  if (!jar.classes.includes(request.mainClass)) {
    throw refuse(
      `main class ${request.mainClass} is not defined by the jar's ${jar.dexEntries.join(', ')} (${jar.classes.length} classes)`,
      [{ path: 'mainClass', message: 'must be a class the jar defines' }],
    );
  }
  return {
    mainClass: request.mainClass,
    socketName: requireSocketName(request),
    devicePath: request.devicePath ?? `${DEVICE_JAR_DIR}${name}.jar`,
  };
}

function requireSocketName(request: PublishRequest): string {
  if (request.socketName === undefined) {
    throw refuse(`a ${request.kind} release needs its socket name (--socket-name)`, [
      { path: 'socketName', message: `required for kind ${request.kind}` },
    ]);
  }
  return request.socketName;
}

function shortComponent(packageName: string, className: string): string {
  return className.startsWith(`${packageName}.`)
    ? `${packageName}/${className.slice(packageName.length)}`
    : `${packageName}/${className}`;
}

function sameRelease(a: ReleaseManifest, b: ReleaseManifest): boolean {
  return a.sha256 === b.sha256;
}

function conflict(existing: ReleaseManifest): BridgeError {
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

  const existing = await repo.getRelease(name, version);
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
      contentType:
        manifest.kind === 'app-process-jar'
          ? 'application/java-archive'
          : 'application/vnd.android.package-archive',
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
  const winner = await repo.getRelease(name, version);
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
async function completeRelease(store: ArtifactStore, manifest: ReleaseManifest): Promise<boolean> {
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
      // Someone moved it (another node, or this publish's earlier attempt whose answer was lost):
      // cached pointers of this process are read again rather than served for up to their TTL.
      latestMoved(store);
      return currentVersion === version;
    }
    const swapped = await store.putIfMatch(key, formatLatestPointer(version), current?.etag ?? null, {
      contentType: 'application/json',
    });
    if (swapped !== null) {
      latestMoved(store);
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * (5 + attempt))));
  }
  throw new BridgeError(
    'UNAVAILABLE',
    `could not move the latest pointer of ${name} to ${version}: it kept changing under ${LATEST_CAS_ATTEMPTS} attempts`,
    { retryable: true },
  );
}
