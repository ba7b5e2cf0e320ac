import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import busboy from 'busboy';
import type { Context } from 'hono';
import {
  APK_MEDIA_TYPE,
  errorResponses,
  HelperNameParam,
  PUBLISH_APK,
  PUBLISH_FORM,
  PublishQuerySchema,
  type PublishResult,
  PublishResultSchema,
  SECURED_ERRORS,
} from '../../api/index.ts';
import type { FileDigest } from '../../artifacts/hash.ts';
import { BridgeError } from '../../errors.ts';
import { isManifestKind, MANIFEST_KINDS } from '../../manifest/index.ts';
import { hasBody, limitedStream, mediaTypeOf, tooLarge } from '../body.ts';
import type { AppEnv } from '../env.ts';
import { type BodyPolicy, guard } from '../middleware/guard.ts';

/** Multipart framing and the small text fields get this much room above the APK limit. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const APK_TYPES = [APK_MEDIA_TYPE, 'application/java-archive', 'application/octet-stream'];
/** The text fields of a publish, as form fields or query parameters (the same names). */
const TEXT_FIELDS = [
  'version',
  'installArgs',
  'runner',
  'kind',
  'mainClass',
  'socketName',
  'devicePath',
  'serviceComponent',
] as const;
const FORM_FIELDS = new Set<string>(TEXT_FIELDS);

const uploadPolicy: BodyPolicy = {
  maxBytes: (services) => services.config.maxUploadBytes + MULTIPART_OVERHEAD_BYTES,
  types: ['multipart/form-data', ...APK_TYPES],
  json: false,
};

function badForm(message: string): BridgeError {
  return new BridgeError('INVALID_ARGUMENT', `multipart upload: ${message}`);
}

/**
 * Stream a multipart/form-data upload: the file part `apk` goes to `file` (at most `limit` bytes),
 * the text fields `version`, `installArgs`, `runner` are kept (each at most once, 1 KiB); nothing is
 * buffered beyond one chunk, and the whole body is capped at `limit` plus the framing allowance.
 */
async function receiveMultipart(
  body: ReadableStream<Uint8Array>,
  contentType: string,
  file: string,
  limit: number,
): Promise<{ fields: Record<string, string>; digest: FileDigest }> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: {
        fileSize: limit,
        files: 1,
        fields: FORM_FIELDS.size,
        fieldSize: 1024,
        parts: 1 + TEXT_FIELDS.length,
        headerPairs: 16,
      },
    });
  } catch (err) {
    throw badForm((err as Error).message);
  }
  const fields: Record<string, string> = Object.create(null);
  let failure: BridgeError | undefined;
  const fail = (err: BridgeError) => {
    failure ??= err;
  };
  let written: Promise<FileDigest> | undefined;
  parser.on('file', (name, stream) => {
    if (name !== 'apk') {
      fail(badForm(`unexpected file field ${JSON.stringify(name.slice(0, 64))} (the APK goes in "apk")`));
      stream.resume();
      return;
    }
    stream.on('limit', () => fail(tooLarge(limit, 'the APK')));
    written = writeHashed(stream, file);
    written.catch(() => {});
  });
  parser.on('field', (name, value, info) => {
    if (!FORM_FIELDS.has(name)) return fail(badForm(`unknown field ${JSON.stringify(name.slice(0, 64))}`));
    if (info.valueTruncated) return fail(badForm(`field ${name} is longer than 1024 bytes`));
    if (name in fields) return fail(badForm(`field ${name} is given twice`));
    fields[name] = value;
  });
  for (const event of ['filesLimit', 'fieldsLimit', 'partsLimit'] as const) {
    parser.on(event, () =>
      fail(badForm(`too many parts (one file "apk" and the fields ${TEXT_FIELDS.join(', ')})`)),
    );
  }
  const source = Readable.fromWeb(
    limitedStream(body, limit + MULTIPART_OVERHEAD_BYTES, 'the upload') as NodeWebStream,
  );
  let digest: FileDigest | undefined;
  try {
    await pipeline(source, parser);
    digest = await written;
  } catch (err) {
    if (err instanceof BridgeError) throw err;
    throw failure ?? badForm((err as Error).message);
  }
  if (failure) throw failure;
  if (digest === undefined) throw badForm('needs a file field named "apk"');
  return { fields, digest };
}

/**
 * Write `source` to `file`, hashing it on the way (sha256 and size of exactly the bytes written): the
 * upload is never read back to be hashed, and never held in memory beyond a chunk.
 */
async function writeHashed(source: Readable, file: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(
    source,
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    }),
    createWriteStream(file),
  );
  return { sha256: hash.digest('hex'), size };
}

/**
 * Stream the request's APK to a temp file, refusing more than `limit` bytes; answers the form fields
 * (multipart) and the sha256 and size of the file, hashed while it was written.
 */
export async function receiveApk(
  c: Context<AppEnv>,
  file: string,
  limit: number,
): Promise<{ fields: Record<string, string>; digest: FileDigest }> {
  const body = c.req.raw.body;
  if (body === null || !hasBody(c)) throw new BridgeError('INVALID_ARGUMENT', 'the request has no body');
  const type = mediaTypeOf(c);
  if (type === 'multipart/form-data') {
    return receiveMultipart(body, c.req.header('content-type')!, file, limit);
  }
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit, 'the APK');
  const digest = await writeHashed(
    Readable.fromWeb(limitedStream(body, limit, 'the APK') as NodeWebStream),
    file,
  );
  return { fields: {}, digest };
}

export function registerReleases(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/helpers/{name}/releases',
      operationId: 'publishRelease',
      tags: ['releases'],
      summary: 'Admin: upload an APK (or a dex jar) and publish it as a helper release',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin', body: uploadPolicy, expensive: true, upload: true }),
      description:
        'Body: multipart/form-data with a file field `apk` (the APK, or the dex jar of an app-process-jar) and fields ' +
        '`version`, `installArgs`, `runner`, `kind`, `mainClass`, `socketName`, `devicePath`, `serviceComponent`; or the ' +
        'raw artifact (application/vnd.android.package-archive, application/java-archive) with those as query parameters. ' +
        'A published version is immutable: ' +
        'the same bytes again is a no-op (200, status "unchanged"), different bytes are refused (409).',
      request: {
        params: z.object({ name: HelperNameParam }),
        query: PublishQuerySchema,
        body: {
          content: {
            'multipart/form-data': { schema: PUBLISH_FORM },
            [APK_MEDIA_TYPE]: { schema: PUBLISH_APK },
            'application/octet-stream': { schema: PUBLISH_APK },
          },
          required: true,
        },
      },
      responses: {
        201: { description: 'published', content: { 'application/json': { schema: PublishResultSchema } } },
        200: {
          description: 'already published with identical bytes',
          content: { 'application/json': { schema: PublishResultSchema } },
        },
        ...errorResponses(
          SECURED_ERRORS,
          'INVALID_ARGUMENT',
          'INSTALL_ARGS_REJECTED',
          'CONFLICT',
          'PAYLOAD_TOO_LARGE',
          'UNSUPPORTED_MEDIA_TYPE',
          'UNAVAILABLE',
        ),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const query = c.req.valid('query');
      const services = c.get('services');
      await mkdir(services.tmpDir, { recursive: true });
      const file = path.join(services.tmpDir, `upload-${randomUUID()}.apk`);
      try {
        const { fields, digest } = await receiveApk(c, file, services.config.maxUploadBytes);
        const version = fields['version'] ?? query.version;
        if (version === undefined) throw new BridgeError('INVALID_ARGUMENT', 'version is required');
        const text = (key: (typeof TEXT_FIELDS)[number]): string | undefined => fields[key] ?? query[key];
        const kind = text('kind');
        if (kind !== undefined && !isManifestKind(kind)) {
          throw new BridgeError('INVALID_ARGUMENT', `kind must be one of ${MANIFEST_KINDS.join(', ')}`, {
            details: { errors: [{ path: 'kind', message: `must be one of ${MANIFEST_KINDS.join(', ')}` }] },
          });
        }
        const optional = (
          key: 'installArgs' | 'runner' | 'mainClass' | 'socketName' | 'devicePath' | 'serviceComponent',
        ) => {
          const value = text(key);
          return value === undefined ? {} : { [key]: value };
        };
        const result = await services.publisher.publish({
          apkPath: file,
          digest,
          name,
          version,
          ...(kind === undefined ? {} : { kind }),
          ...optional('installArgs'),
          ...optional('runner'),
          ...optional('mainClass'),
          ...optional('socketName'),
          ...optional('devicePath'),
          ...optional('serviceComponent'),
        });
        c.get('logger').info({ helper: name, version, status: result.status }, 'release publish');
        const answer: PublishResult = result;
        return c.json(answer, result.status === 'published' ? 201 : 200);
      } catch (err) {
        // Refusals, before publishing (no version, a bad upload) or by it, are counted here.
        if (err instanceof BridgeError) services.metrics.publishes.inc({ outcome: 'refused' });
        throw err;
      } finally {
        await rm(file, { force: true });
      }
    },
  );
}
