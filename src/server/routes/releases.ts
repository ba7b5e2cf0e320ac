import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { BridgeError } from '../../errors.ts';
import { parseInstallArgsString } from '../../manifest/index.ts';
import { publishRelease } from '../../releases/publish.ts';
import type { AppEnv } from '../env.ts';
import { requireRole } from '../middleware/auth.ts';
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

function tooLarge(limit: number): BridgeError {
  return new BridgeError('PAYLOAD_TOO_LARGE', `the upload exceeds the limit of ${limit} bytes`, {
    details: { limitBytes: limit },
  });
}

/** Stream the request's APK to a temp file, refusing more than `limit` bytes. */
async function receiveApk(
  c: Context<AppEnv>,
  file: string,
  limit: number,
): Promise<{ fields: Record<string, string> }> {
  const declared = Number(c.req.header('content-length') ?? Number.NaN);
  // Multipart carries some framing; allow it a little room above the APK limit.
  const type = c.req.header('content-type') ?? '';
  const isMultipart = type.startsWith('multipart/form-data');
  if (Number.isFinite(declared) && declared > limit + (isMultipart ? 64 * 1024 : 0)) throw tooLarge(limit);

  if (isMultipart) {
    const form = await c.req.parseBody({ all: false });
    const apk = form['apk'];
    if (!(apk instanceof File)) {
      throw new BridgeError('INVALID_ARGUMENT', 'multipart upload needs a file field named "apk"');
    }
    if (apk.size > limit) throw tooLarge(limit);
    await pipeline(Readable.fromWeb(apk.stream() as never), createWriteStream(file));
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(form)) if (typeof v === 'string') fields[k] = v;
    return { fields };
  }
  if (type !== 'application/vnd.android.package-archive' && type !== 'application/octet-stream') {
    throw new BridgeError(
      'INVALID_ARGUMENT',
      'upload the APK as multipart/form-data (field "apk") or as application/vnd.android.package-archive',
    );
  }
  const body = c.req.raw.body;
  if (body === null) throw new BridgeError('INVALID_ARGUMENT', 'the request has no body');
  let received = 0;
  const counted = Readable.fromWeb(body as never).on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) counted.destroy(tooLarge(limit));
  });
  await pipeline(counted, createWriteStream(file));
  return { fields: {} };
}

export function registerReleases(app: OpenAPIHono<AppEnv>): void {
  app.use('/v1/helpers/:name/releases', requireRole('admin'));
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/helpers/{name}/releases',
      summary: 'Admin: upload an APK and publish it as a helper release',
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
        ...errorResponses(400, 401, 403, 409, 413),
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
        const installArgsText = fields['installArgs'] ?? query.installArgs;
        const runner = fields['runner'] ?? query.runner;
        const result = await publishRelease(services.store, {
          apkPath: file,
          name,
          version,
          ...(installArgsText === undefined ? {} : { installArgs: parseInstallArgsString(installArgsText) }),
          ...(runner === undefined ? {} : { runner }),
        });
        services.metrics.publishes.inc({ outcome: result.status });
        c.var.logger.info({ helper: name, version, status: result.status }, 'release publish');
        return c.json(result as z.infer<typeof PublishResult>, result.status === 'published' ? 201 : 200);
      } catch (err) {
        if (err instanceof BridgeError) services.metrics.publishes.inc({ outcome: 'refused' });
        throw err;
      } finally {
        await rm(file, { force: true });
      }
    },
  );
}
