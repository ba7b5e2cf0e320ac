/**
 * Where releases live in an ArtifactStore. Artifacts are content-addressed; manifests are per
 * helper version; `latest.json` is a pointer that is always written last.
 *
 *   blobs/<sha256>                                       APK (or jar) bytes
 *   helpers/<name>/versions/<version>/manifest.json      the release manifest
 *   helpers/<name>/versions/<version>/<assetName>.sha256 "<hex>  <assetName>\n"
 *   helpers/<name>/latest.json                           {"version": "<highest published semver>"}
 */
export const artifactKey = (sha256: string): string => `blobs/${sha256}`;
export const helpersPrefix = 'helpers/';
export const versionPrefix = (name: string): string => `helpers/${name}/versions/`;
export const manifestKey = (name: string, version: string): string =>
  `helpers/${name}/versions/${version}/manifest.json`;
export const checksumKey = (name: string, version: string, checksumName: string): string =>
  `helpers/${name}/versions/${version}/${checksumName}`;
export const latestKey = (name: string): string => `helpers/${name}/latest.json`;
