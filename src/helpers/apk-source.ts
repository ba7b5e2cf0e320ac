/**
 * Where a helper's APK comes from on this node: always through the content-addressed local cache
 * (verified by sha256 before it reaches a device). Published manifests of this bridge carry
 * `apkUrl: null` and their bytes live in the bridge's own artifact store; foreign manifests name an
 * `apkUrl` that is fetched once per node.
 */
import { readApkInfo } from '../artifacts/apk-file.ts';
import type { ArtifactCache } from '../artifacts/cache.ts';
import { FsArtifactStore } from '../artifacts/fs-store.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { BridgeError } from '../errors.ts';
import type { InstallableApkManifest, ReleaseManifest } from '../manifest/index.ts';
import { artifactKey } from '../releases/layout.ts';

/**
 * When the manifest pins the signer (`signingCertSha256`), the APK must be signed by exactly that
 * certificate: a manifest that names the wrong signer is refused before anything reaches a device.
 */
export async function checkSignerPin(apkPath: string, manifest: InstallableApkManifest): Promise<void> {
  const pin = manifest.signingCertSha256;
  if (pin === undefined) return;
  const { signerCertSha256 } = await readApkInfo(apkPath);
  if (!signerCertSha256.includes(pin)) {
    throw new BridgeError(
      'CHECKSUM_MISMATCH',
      `${manifest.name} ${manifest.version}: the APK is not signed by the pinned certificate ${pin}`,
      { details: { signingCertSha256: pin, actual: signerCertSha256 } },
    );
  }
}

export function apkSource(
  cache: ArtifactCache,
  store: ArtifactStore,
  manifest: InstallableApkManifest,
): () => Promise<string> {
  return async () => {
    const path = await fetchArtifact(cache, store, manifest);
    await checkSignerPin(path, manifest);
    return path;
  };
}

/** Any release's artifact (an APK, the glass agent's dex jar) as a sha256-verified file in the cache. */
export function artifactSource(
  cache: ArtifactCache,
  store: ArtifactStore,
  manifest: ReleaseManifest,
): () => Promise<string> {
  return () => fetchArtifact(cache, store, manifest);
}

async function fetchArtifact(
  cache: ArtifactCache,
  store: ArtifactStore,
  manifest: ReleaseManifest,
): Promise<string> {
  const stored = await storedApk(cache, store, manifest.sha256);
  if (stored !== null) return stored;
  if (manifest.apkUrl === null) {
    throw new BridgeError(
      'NOT_FOUND',
      `no artifact with sha256 ${manifest.sha256} for ${manifest.name} ${manifest.version}`,
    );
  }
  return (await cache.fetch(manifest.apkUrl, manifest.sha256)).path;
}

/**
 * The local, sha256-verified copy of an artifact of this bridge's store (through the cache), or null
 * when the store has no artifact with that sha256.
 */
export async function storedApk(
  cache: ArtifactCache,
  store: ArtifactStore,
  sha256: string,
): Promise<string | null> {
  const key = artifactKey(sha256);
  if ((await store.stat(key)) === null) return null;
  if (store instanceof FsArtifactStore) return (await cache.importFile(store.pathFor(key), sha256)).path;
  const url = await store.downloadUrl(key);
  if (url !== null) return (await cache.fetch(url, sha256)).path;
  // No download URL (S3 without presigned URLs or a public base): read the object itself.
  const imported = await cache.importStream(sha256, async () => {
    const read = await store.openRead(key);
    return read === null ? null : { stream: read.stream, size: read.info.size };
  });
  return imported?.path ?? null;
}
