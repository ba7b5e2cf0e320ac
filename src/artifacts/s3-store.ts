/**
 * S3 artifact store (AWS S3 or any S3-compatible server via `endpoint` + `forcePathStyle`). The only
 * module besides `s3-*.ts` siblings that may import the AWS SDK.
 *
 * `putIfAbsent`: HEAD first (a cheap "exists → false"), then PUT with `If-None-Match: *`, which AWS
 * S3 (since 2024) and most compatible servers enforce atomically (412 → false). Servers that ignore
 * the header (s3rver does) degrade to plain head-then-put: two racing creators can then both see
 * "absent" and the later write wins while both resolve true. Immutability checks above the store
 * (same version, different bytes) must therefore compare content after writing when running on
 * such a server (publishing reads the manifest back and derives everything from what it reads).
 *
 * `putIfMatch` (the compare-and-swap `latest` moves with) sends `If-Match: <etag>` or
 * `If-None-Match: *` and never falls back: on a server that refuses conditional writes it fails.
 */
import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { BridgeError } from '../errors.ts';
import { sourceSize } from './fs-store.ts';
import {
  type ArtifactStore,
  type ByteRange,
  type ObjectInfo,
  type OpenReadResult,
  type PutOptions,
  resolveRange,
  toBytes,
  validateKey,
  validatePrefix,
} from './store.ts';
import { normalizeS3Prefix, validateBucketName } from './store-spec.ts';

export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const DEFAULT_PART_SIZE = 8 * 1024 * 1024;

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface S3ArtifactStoreOptions {
  bucket: string;
  /** Key prefix inside the bucket ('' or `a/b`, trailing slash optional). */
  prefix?: string;
  /** Custom endpoint for S3-compatible servers, e.g. `http://127.0.0.1:9000`. */
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** Omit to use the AWS SDK default chain (AWS_ACCESS_KEY_ID, profiles, IMDS, …). */
  credentials?: S3Credentials;
  /** Expiry of presigned download URLs in seconds; 0 = no presigning. */
  presignSeconds: number;
  /** Public base URL mapping to the bucket root; download URLs are `<base>/<prefix><key>`. Wins over presigning. */
  publicBaseUrl?: string;
  /** Files at or above this size upload as multipart (default 8 MiB). */
  multipartThresholdBytes?: number;
  /** Multipart part size (default 8 MiB, minimum 5 MiB). */
  partSizeBytes?: number;
  /** Keys per ListObjectsV2 page (default 1000, the S3 maximum). */
  listPageSize?: number;
  /** Parallel parts in flight (default 4). */
  queueSize?: number;
  /**
   * Flexible checksums: 'when-required' suits S3-compatible servers that do not understand
   * aws-chunked trailers (the default when `endpoint` is set); 'when-supported' is the SDK default.
   */
  checksums?: 'when-supported' | 'when-required';
  /**
   * How long a TCP connection to the endpoint may take (default 5 s). Without it a store whose SYNs
   * are dropped (a container not yet wired, a firewall) holds the call, and one of the HTTP agent's
   * 50 sockets, for minutes; the SDK retries a timed-out attempt.
   */
  connectTimeoutMs?: number;
  /**
   * How long a connection may go without a byte in either direction (default 60 s) before the call
   * fails (UNAVAILABLE, retryable): a server that accepts and never answers must not hold a request,
   * a readiness probe or an agent socket forever. Idle time, not a total: large transfers that keep
   * moving are unaffected.
   */
  idleTimeoutMs?: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

interface SdkError {
  name?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

function statusOf(err: unknown): number | undefined {
  return (err as SdkError | null)?.$metadata?.httpStatusCode;
}

function nameOf(err: unknown): string {
  const e = err as SdkError | null;
  return e?.name ?? e?.code ?? 'Error';
}

export class S3ArtifactStore implements ArtifactStore {
  readonly kind = 's3' as const;
  readonly description: string;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #presignSeconds: number;
  readonly #publicBaseUrl: string | undefined;
  readonly #threshold: number;
  readonly #partSize: number;
  readonly #queueSize: number;
  readonly #listPageSize: number;

  constructor(options: S3ArtifactStoreOptions) {
    validateBucketName(options.bucket);
    this.#bucket = options.bucket;
    this.#prefix = normalizeS3Prefix(options.prefix ?? '');
    if (
      !Number.isInteger(options.presignSeconds) ||
      options.presignSeconds < 0 ||
      options.presignSeconds > 604800
    ) {
      throw new BridgeError('INVALID_ARGUMENT', 'presignSeconds must be an integer from 0 to 604800');
    }
    this.#presignSeconds = options.presignSeconds;
    if (options.publicBaseUrl !== undefined) {
      let url: URL;
      try {
        url = new URL(options.publicBaseUrl);
      } catch {
        throw new BridgeError('INVALID_ARGUMENT', 'publicBaseUrl is not a valid URL');
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw new BridgeError('INVALID_ARGUMENT', 'publicBaseUrl must be an http(s) URL');
      }
      if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
        throw new BridgeError(
          'INVALID_ARGUMENT',
          'publicBaseUrl must not carry credentials, a query or a fragment',
        );
      }
      this.#publicBaseUrl = url.href.replace(/\/+$/, '');
    }
    this.#partSize = options.partSizeBytes ?? DEFAULT_PART_SIZE;
    if (!Number.isInteger(this.#partSize) || this.#partSize < MIN_PART_SIZE) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `partSizeBytes must be an integer of at least ${MIN_PART_SIZE}`,
      );
    }
    this.#threshold = options.multipartThresholdBytes ?? DEFAULT_PART_SIZE;
    if (!Number.isInteger(this.#threshold) || this.#threshold < 1) {
      throw new BridgeError('INVALID_ARGUMENT', 'multipartThresholdBytes must be a positive integer');
    }
    this.#queueSize = options.queueSize ?? 4;
    this.#listPageSize = options.listPageSize ?? 1000;
    if (!Number.isInteger(this.#listPageSize) || this.#listPageSize < 1 || this.#listPageSize > 1000) {
      throw new BridgeError('INVALID_ARGUMENT', 'listPageSize must be an integer from 1 to 1000');
    }
    const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    for (const [name, value] of [
      ['connectTimeoutMs', connectTimeoutMs],
      ['idleTimeoutMs', idleTimeoutMs],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) {
        throw new BridgeError('INVALID_ARGUMENT', `${name} must be a positive integer (milliseconds)`);
      }
    }
    const checksums =
      options.checksums ?? (options.endpoint === undefined ? 'when-supported' : 'when-required');
    const config: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      requestChecksumCalculation: checksums === 'when-required' ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED',
      responseChecksumValidation: checksums === 'when-required' ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED',
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      // The SDK's own handler, configured: no timeout at all by default.
      requestHandler: { connectionTimeout: connectTimeoutMs, socketTimeout: idleTimeoutMs },
    };
    this.#client = new S3Client(config);
    this.description = `s3://${this.#bucket}/${this.#prefix}`;
  }

  get bucket(): string {
    return this.#bucket;
  }

  /** The object key inside the bucket (prefix + key). */
  objectKey(key: string): string {
    validateKey(key);
    return `${this.#prefix}${key}`;
  }

  #error(op: string, key: string, err: unknown): BridgeError {
    if (err instanceof BridgeError) return err;
    const status = statusOf(err);
    const name = nameOf(err);
    const where = `s3://${this.#bucket}/${this.#prefix}${key}`;
    const message = `S3 ${op} ${where} failed: ${name}${status === undefined ? '' : ` (HTTP ${status})`}`;
    const details = { op, key, ...(status === undefined ? {} : { status }), s3Error: name };
    // The raw SDK error carries the signed request (Authorization header, presigned query); keep
    // only its name and message as the cause so no logger can serialise them.
    const cause = new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    if (status === undefined || status >= 500 || status === 429 || status === 408) {
      return new BridgeError('UNAVAILABLE', message, { details, cause });
    }
    if (status === 401 || status === 403)
      return new BridgeError('PERMISSION_DENIED', message, { details, cause });
    if (status === 404) return new BridgeError('NOT_FOUND', message, { details, cause });
    if (status === 409 || status === 412) return new BridgeError('CONFLICT', message, { details, cause });
    return new BridgeError('INTERNAL', message, { details, cause });
  }

  async put(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<ObjectInfo> {
    const objectKey = this.objectKey(key);
    const bytes = toBytes(body);
    options.onProgress?.(0, bytes.length);
    try {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: objectKey,
          Body: bytes,
          ContentLength: bytes.length,
          ...(options.contentType === undefined ? {} : { ContentType: options.contentType }),
        }),
      );
    } catch (err) {
      throw this.#error('put', key, err);
    }
    options.onProgress?.(bytes.length, bytes.length);
    return this.#mustStat(key, 'put');
  }

  async putFile(key: string, filePath: string, options: PutOptions = {}): Promise<ObjectInfo> {
    const objectKey = this.objectKey(key);
    const size = await sourceSize(filePath);
    options.onProgress?.(0, size);
    try {
      if (size < this.#threshold) {
        let sent = 0;
        const counter = new Transform({
          transform(chunk: Buffer, _enc, callback) {
            sent += chunk.length;
            options.onProgress?.(sent, size);
            callback(null, chunk);
          },
        });
        const source = createReadStream(filePath);
        source.on('error', (err) => counter.destroy(err));
        await this.#client.send(
          new PutObjectCommand({
            Bucket: this.#bucket,
            Key: objectKey,
            Body: source.pipe(counter),
            ContentLength: size,
            ...(options.contentType === undefined ? {} : { ContentType: options.contentType }),
          }),
        );
      } else {
        const upload = new Upload({
          client: this.#client,
          partSize: this.#partSize,
          queueSize: this.#queueSize,
          leavePartsOnError: false,
          params: {
            Bucket: this.#bucket,
            Key: objectKey,
            Body: createReadStream(filePath, { highWaterMark: 1 << 20 }),
            ...(options.contentType === undefined ? {} : { ContentType: options.contentType }),
          },
        });
        upload.on('httpUploadProgress', (progress) => {
          if (progress.loaded !== undefined) options.onProgress?.(progress.loaded, size);
        });
        await upload.done();
      }
    } catch (err) {
      throw this.#error('putFile', key, err);
    }
    options.onProgress?.(size, size);
    const info = await this.#mustStat(key, 'putFile');
    if (info.size !== size) {
      throw new BridgeError('INTERNAL', `S3 putFile ${key}: stored ${info.size} bytes, expected ${size}`, {
        details: { key, expected: size, actual: info.size },
      });
    }
    return info;
  }

  async putIfAbsent(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<boolean> {
    const objectKey = this.objectKey(key);
    const bytes = toBytes(body);
    if ((await this.stat(key)) !== null) return false;
    options.onProgress?.(0, bytes.length);
    const send = (conditional: boolean) =>
      this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: objectKey,
          Body: bytes,
          ContentLength: bytes.length,
          ...(conditional ? { IfNoneMatch: '*' } : {}),
          ...(options.contentType === undefined ? {} : { ContentType: options.contentType }),
        }),
      );
    try {
      try {
        await send(true);
      } catch (err) {
        const status = statusOf(err);
        if (status === 501 || (status === 400 && /NotImplemented|InvalidArgument/.test(nameOf(err)))) {
          // The server rejects conditional writes: fall back to the (racy) head-then-put.
          await send(false);
        } else {
          throw err;
        }
      }
    } catch (err) {
      const status = statusOf(err);
      if (status === 412) return false;
      if (status === 409) {
        // ConditionalRequestConflict: a concurrent write to the same key is in flight.
        if ((await this.stat(key)) !== null) return false;
      }
      throw this.#error('putIfAbsent', key, err);
    }
    options.onProgress?.(bytes.length, bytes.length);
    return true;
  }

  /**
   * Compare-and-swap with S3 conditional writes: `If-Match: <etag>` (or `If-None-Match: *` when the
   * key must be absent); the server decides atomically. 412 PreconditionFailed, 409
   * ConditionalRequestConflict (a concurrent conditional write won) and 404 (the object was deleted
   * under an If-Match) resolve null. A server that rejects conditional writes (501) is refused
   * rather than degraded to a blind overwrite: callers rely on the swap being atomic. Servers that
   * silently ignore the headers (s3rver) cannot be detected here.
   */
  async putIfMatch(
    key: string,
    body: Uint8Array | string,
    expectedEtag: string | null,
    options: PutOptions = {},
  ): Promise<ObjectInfo | null> {
    const objectKey = this.objectKey(key);
    const bytes = toBytes(body);
    try {
      const out = await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: objectKey,
          Body: bytes,
          ContentLength: bytes.length,
          ...(expectedEtag === null ? { IfNoneMatch: '*' } : { IfMatch: expectedEtag }),
          ...(options.contentType === undefined ? {} : { ContentType: options.contentType }),
        }),
      );
      return {
        key,
        size: bytes.length,
        etag: out.ETag ?? '""',
        lastModified: new Date(),
        ...(options.contentType === undefined ? {} : { contentType: options.contentType }),
      };
    } catch (err) {
      const status = statusOf(err);
      if (status === 412 || status === 409) return null;
      if (status === 404 && expectedEtag !== null && nameOf(err) !== 'NoSuchBucket') return null;
      if (status === 501 || (status === 400 && /NotImplemented/.test(nameOf(err)))) {
        throw new BridgeError(
          'UNAVAILABLE',
          `S3 putIfMatch s3://${this.#bucket}/${objectKey}: the server does not support conditional writes (If-Match / If-None-Match), which publishing needs`,
          { retryable: false, details: { op: 'putIfMatch', key, status } },
        );
      }
      throw this.#error('putIfMatch', key, err);
    }
  }

  async getVersioned(key: string): Promise<{ body: Buffer; etag: string } | null> {
    const objectKey = this.objectKey(key);
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
      const body =
        out.Body === undefined ? Buffer.alloc(0) : Buffer.from(await out.Body.transformToByteArray());
      return { body, etag: out.ETag ?? '""' };
    } catch (err) {
      if (isMissing(err)) return null;
      throw this.#error('getVersioned', key, err);
    }
  }

  async get(key: string): Promise<Buffer | null> {
    const objectKey = this.objectKey(key);
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
      if (out.Body === undefined) return Buffer.alloc(0);
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (err) {
      if (isMissing(err)) return null;
      throw this.#error('get', key, err);
    }
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    const objectKey = this.objectKey(key);
    try {
      const out = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
      return {
        key,
        size: out.ContentLength ?? 0,
        etag: out.ETag ?? '""',
        lastModified: out.LastModified ?? new Date(0),
        ...(out.ContentType === undefined ? {} : { contentType: out.ContentType }),
      };
    } catch (err) {
      if (isMissing(err)) return null;
      throw this.#error('stat', key, err);
    }
  }

  async #mustStat(key: string, op: string): Promise<ObjectInfo> {
    const info = await this.stat(key);
    if (info === null) {
      throw new BridgeError('UNAVAILABLE', `S3 ${op} ${key}: object not visible after upload`, {
        details: { key },
      });
    }
    return info;
  }

  async openRead(key: string, range?: ByteRange): Promise<OpenReadResult | null> {
    const objectKey = this.objectKey(key);
    if (range !== undefined) resolveRange(range, Number.MAX_SAFE_INTEGER, key); // shape check only
    try {
      const out = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: objectKey,
          ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }),
        }),
      );
      const stream = out.Body as unknown as NodeJS.ReadableStream & AsyncIterable<Buffer>;
      let size = out.ContentLength ?? 0;
      let served: ByteRange | undefined;
      if (range !== undefined) {
        const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(out.ContentRange ?? '');
        if (match) {
          served = { start: Number(match[1]), end: Number(match[2]) };
          size = Number(match[3]);
        } else {
          // The server ignored the range and sent the whole object: treat it as the full body.
          served = undefined;
        }
      }
      const info: ObjectInfo = {
        key,
        size,
        etag: out.ETag ?? '""',
        lastModified: out.LastModified ?? new Date(0),
        ...(out.ContentType === undefined ? {} : { contentType: out.ContentType }),
      };
      return served === undefined ? { stream, info } : { stream, info, range: served };
    } catch (err) {
      if (isMissing(err)) return null;
      if (statusOf(err) === 416 && range !== undefined) {
        const info = await this.stat(key);
        if (info === null) return null;
        resolveRange(range, info.size, key); // throws RANGE_NOT_SATISFIABLE
      }
      throw this.#error('openRead', key, err);
    }
  }

  /**
   * Paginates with ListObjects (v1) and `Marker` = the last key seen. v2 continuation tokens would
   * do the same job, but some S3-compatible servers cannot mint them (s3rver on Node ≥ 17 fails with
   * a 500 because its tokens use DES, which OpenSSL 3 disables); v1 markers work everywhere.
   */
  async list(prefix: string): Promise<string[]> {
    validatePrefix(prefix);
    const keys: string[] = [];
    let marker: string | undefined;
    try {
      for (;;) {
        const out = await this.#client.send(
          new ListObjectsCommand({
            Bucket: this.#bucket,
            Prefix: `${this.#prefix}${prefix}`,
            MaxKeys: this.#listPageSize,
            ...(marker === undefined ? {} : { Marker: marker }),
          }),
        );
        const page = out.Contents ?? [];
        for (const item of page) {
          if (item.Key?.startsWith(this.#prefix)) keys.push(item.Key.slice(this.#prefix.length));
        }
        const last = page.at(-1)?.Key;
        if (!out.IsTruncated || last === undefined || last === marker) break;
        marker = last;
      }
    } catch (err) {
      throw this.#error('list', prefix, err);
    }
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key);
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: objectKey }));
    } catch (err) {
      if (isMissing(err)) return;
      throw this.#error('delete', key, err);
    }
  }

  async downloadUrl(key: string): Promise<string | null> {
    const objectKey = this.objectKey(key);
    if (this.#publicBaseUrl !== undefined) {
      return `${this.#publicBaseUrl}/${objectKey.split('/').map(encodeURIComponent).join('/')}`;
    }
    if (this.#presignSeconds === 0) return null;
    try {
      return await getSignedUrl(
        this.#client,
        new GetObjectCommand({ Bucket: this.#bucket, Key: objectKey }),
        {
          expiresIn: this.#presignSeconds,
        },
      );
    } catch (err) {
      throw this.#error('presign', key, err);
    }
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }
}

function isMissing(err: unknown): boolean {
  const name = nameOf(err);
  if (name === 'NoSuchBucket') return false;
  return statusOf(err) === 404 || name === 'NoSuchKey' || name === 'NotFound';
}
