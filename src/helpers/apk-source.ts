/**
 * Where a helper's APK comes from on this node: always through the content-addressed local cache
 * (verified by sha256 before it reaches a device). Published manifests of this bridge carry
 * `apkUrl: null` and their bytes live in the bridge's own artifact store; foreign manifests name an
 * `apkUrl` that is fetched once per node.
 */
import type { ArtifactCache } from '../artifacts/cache.ts';
import { FsArtifactStore } from '../artifacts/fs-store.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { BridgeError } from '../errors.ts';
import type { HelperManifest } from '../manifest/index.ts';
import { artifactKey } from '../releases/layout.ts';

export function apkSource(
  cache: ArtifactCache,
  store: ArtifactStore,
  manifest: HelperManifest,
): () => Promise<string> {
  return async () => {
    const key = artifactKey(manifest.sha256);
    if (store instanceof FsArtifactStore && (await store.stat(key)) !== null) {
      return (await cache.importFile(store.pathFor(key), manifest.sha256)).path;
    }
    const storeUrl = (await store.stat(key)) !== null ? await store.downloadUrl(key) : null;
    const url = storeUrl ?? manifest.apkUrl;
    if (url === null) {
      throw new BridgeError(
        'NOT_FOUND',
        `no artifact with sha256 ${manifest.sha256} for ${manifest.name} ${manifest.version}`,
      );
    }
    return (await cache.fetch(url, manifest.sha256)).path;
  };
}
