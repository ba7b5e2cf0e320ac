import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import busboy from 'busboy';
import type { Context } from 'hono';
import { BridgeError } from '../../errors.ts';
import { hasBody, limitedStream, mediaTypeOf, tooLarge } from '../body.ts';
import type { AppEnv } from '../env.ts';
import { type BodyPolicy, guard } from '../middleware/guard.ts';
import { errorResponses, HelperNameParam, ManifestSchema } from '../schemas.ts';

const PublishResult = z
  .object({ status: z.enum(['published', 'unchanged']), latest: z.boolean(), manifest: ManifestSchema })
  .openapi('PublishResult');

const Query = z.object({
  version: z
    .string()
    .max(256)
    .optional()
    .openapi({ description: 'release version (semver); or a form field' }),
  installArgs: z.string().max(64).optional().openapi({ example: 'install -r -t' }),
  runner: z.string().max(512).optional().openapi({ example: 'com.example.helper/.Instrumentation' }),
});

/** Multipart framing and the small text fields get this much room above the APK limit. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const APK_TYPES = ['application/vnd.android.package-archive', 'application/octet-stream'];
const FORM_FIELDS = new Set(['version', 'installArgs', 'runner']);

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
): Promise<Record<string, string>> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: {
        fileSize: limit,
        files: 1,
        fields: FORM_FIELDS.size,
        fieldSize: 1024,
        parts: 8,
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
  let written: Promise<void> | undefined;
  parser.on('file', (name, stream) => {
    if (name !== 'apk') {
      fail(badForm(`unexpected file field ${JSON.stringify(name.slice(0, 64))} (the APK goes in "apk")`));
      stream.resume();
      return;
    }
    stream.on('limit', () => fail(tooLarge(limit, 'the APK')));
    written = pipeline(stream, createWriteStream(file));
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
      fail(badForm('too many parts (one file "apk" and the fields version, installArgs, runner)')),
    );
  }
  const source = Readable.fromWeb(
    limitedStream(body, limit + MULTIPART_OVERHEAD_BYTES, 'the upload') as never,
  );
  try {
    await pipeline(source, parser);
    await written;
  } catch (err) {
    if (err instanceof BridgeError) throw err;
    throw failure ?? badForm((err as Error).message);
  }
  if (failure) throw failure;
  if (written === undefined) throw badForm('needs a file field named "apk"');
  return fields;
}

/** Stream the request's APK to a temp file, refusing more than `limit` bytes. */
async function receiveApk(
  c: Context<AppEnv>,
  file: string,
  limit: number,
): Promise<{ fields: Record<string, string> }> {
  const body = c.req.raw.body;
  if (body === null || !hasBody(c)) throw new BridgeError('INVALID_ARGUMENT', 'the request has no body');
  const type = mediaTypeOf(c);
  if (type === 'multipart/form-data') {
    return { fields: await receiveMultipart(body, c.req.header('content-type')!, file, limit) };
  }
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit, 'the APK');
  await pipeline(Readable.fromWeb(limitedStream(body, limit, 'the APK') as never), createWriteStream(file));
  return { fields: {} };
}

export function registerReleases(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/helpers/{name}/releases',
      summary: 'Admin: upload an APK and publish it as a helper release',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin', body: uploadPolicy, expensive: true }),
      description:
        'Body: multipart/form-data with a file field `apk` and fields `version`, `installArgs`, `runner`; or the raw APK ' +
        '(application/vnd.android.package-archive) with those as query parameters. A published version is immutable: ' +
        'the same bytes again is a no-op (200, status "unchanged"), different bytes are refused (409).',
      request: { params: z.object({ name: HelperNameParam }), query: Query },
      responses: {
        201: { description: 'published', content: { 'application/json': { schema: PublishResult } } },
        200: {
          description: 'already published with identical bytes',
          content: { 'application/json': { schema: PublishResult } },
        },
        ...errorResponses(400, 401, 403, 409, 413, 415),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const query = c.req.valid('query');
      const { services } = c.var;
      await mkdir(services.tmpDir, { recursive: true });
      const file = path.join(services.tmpDir, `upload-${randomUUID()}.apk`);
      try {
        const { fields } = await receiveApk(c, file, services.config.maxUploadBytes);
        const version = fields['version'] ?? query.version;
        if (version === undefined) throw new BridgeError('INVALID_ARGUMENT', 'version is required');
        const installArgs = fields['installArgs'] ?? query.installArgs;
        const runner = fields['runner'] ?? query.runner;
        const result = await services.publisher.publish({
          apkPath: file,
          name,
          version,
          ...(installArgs === undefined ? {} : { installArgs }),
          ...(runner === undefined ? {} : { runner }),
        });
        c.var.logger.info({ helper: name, version, status: result.status }, 'release publish');
        return c.json(result as z.infer<typeof PublishResult>, result.status === 'published' ? 201 : 200);
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
