export {
  ArtifactCache,
  type ArtifactCacheOptions,
  type CachedArtifact,
  type CacheFetchOptions,
  DEFAULT_MAX_ARTIFACT_BYTES,
  type ProgressListener,
} from './cache.ts';
export { FsArtifactStore } from './fs-store.ts';
export { type FileDigest, isSha256Hex, sha256Bytes, sha256File } from './hash.ts';
export { type OpenStoreOptions, openArtifactStore, storeSpecFromConfig } from './open-store.ts';
export { S3ArtifactStore, type S3ArtifactStoreOptions, type S3Credentials } from './s3-store.ts';
export {
  type ArtifactStore,
  type ByteRange,
  isValidKey,
  MAX_KEY_LENGTH,
  type ObjectInfo,
  type OpenReadResult,
  type PutOptions,
  resolveRange,
  validateKey,
  validatePrefix,
} from './store.ts';
export {
  bucketNameProblem,
  formatStoreSpec,
  normalizeS3Prefix,
  parseStoreSpec,
  type StoreSpec,
  validateBucketName,
} from './store-spec.ts';
