import path from 'node:path';
import type { Config } from '../config.ts';
import { FsArtifactStore } from './fs-store.ts';
import { S3ArtifactStore, type S3Credentials } from './s3-store.ts';
import type { ArtifactStore } from './store.ts';
import { parseStoreSpec } from './store-spec.ts';

export interface OpenStoreOptions {
  /** Base for relative `file:` directories (default: the process's cwd). */
  baseDir?: string;
  s3Endpoint?: string;
  s3Region?: string;
  s3ForcePathStyle?: boolean;
  s3PresignSeconds?: number;
  s3PublicBaseUrl?: string;
  /** Explicit credentials; otherwise the AWS SDK default chain (AWS_ACCESS_KEY_ID, profile, …). */
  s3Credentials?: S3Credentials;
  s3MultipartThresholdBytes?: number;
  s3PartSizeBytes?: number;
}

/**
 * Open a store from a spec: `file:DIR` (relative to `baseDir`) or `s3://BUCKET/PREFIX`. The option
 * names match `Config`, so `openArtifactStore(spec, config)` works.
 */
export function openArtifactStore(spec: string, options: OpenStoreOptions = {}): ArtifactStore {
  const parsed = parseStoreSpec(spec);
  if (parsed.kind === 'fs') {
    return new FsArtifactStore(path.resolve(options.baseDir ?? process.cwd(), parsed.dir));
  }
  return new S3ArtifactStore({
    bucket: parsed.bucket,
    prefix: parsed.prefix,
    region: options.s3Region ?? 'us-east-1',
    forcePathStyle: options.s3ForcePathStyle ?? false,
    presignSeconds: options.s3PresignSeconds ?? 0,
    ...(options.s3Endpoint === undefined ? {} : { endpoint: options.s3Endpoint }),
    ...(options.s3PublicBaseUrl === undefined ? {} : { publicBaseUrl: options.s3PublicBaseUrl }),
    ...(options.s3Credentials === undefined ? {} : { credentials: options.s3Credentials }),
    ...(options.s3MultipartThresholdBytes === undefined
      ? {}
      : { multipartThresholdBytes: options.s3MultipartThresholdBytes }),
    ...(options.s3PartSizeBytes === undefined ? {} : { partSizeBytes: options.s3PartSizeBytes }),
  });
}

/** The store spec the configuration selects: S3 when `S3_BUCKET` is set, else `file:<dataDir>/artifacts`. */
export function storeSpecFromConfig(config: Pick<Config, 's3Bucket' | 's3Prefix' | 'dataDir'>): string {
  if (config.s3Bucket !== undefined) {
    const prefix = config.s3Prefix.replace(/^\/+/, '');
    return `s3://${config.s3Bucket}/${prefix}`;
  }
  return `file:${path.join(config.dataDir, 'artifacts')}`;
}
