import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import {
  APK_MEDIA_TYPE,
  BODY_ERRORS,
  errorResponses,
  HELPER_ERRORS,
  InstallAppJsonSchema,
  InstallAppQuerySchema,
  LEASE_ERRORS,
  LeaseAppSchema,
  LeaseIdParam,
  PUBLISH_APK,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import { BridgeError } from '../../../errors.ts';
import { parseInstallArgsString } from '../../../manifest/install-args.ts';
import { mediaTypeOf, tooLarge } from '../../body.ts';
import type { AppEnv } from '../../env.ts';
import {
  type BodyPolicy,
  guard,
  JSON_TYPES,
  jsonBody,
  maxBytesOf,
  readJson,
} from '../../middleware/guard.ts';
import { receiveApk } from '../releases.ts';
import { SMALL_BODY_BYTES, scopeFor } from './common.ts';

const APK_TYPES = [APK_MEDIA_TYPE, 'application/octet-stream'];

/** An APK upload (the bridge's upload limit) or a small JSON reference to a published artifact. */
const installPolicy: BodyPolicy = {
  maxBytes: (services) => services.config.maxUploadBytes,
  types: [...APK_TYPES, ...JSON_TYPES],
  json: false,
};

/** A JSON body (a reference by sha256) is read under the small-body limit, before the validator. */
const smallJson: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (mediaTypeOf(c) === 'application/json') await readJson(c, jsonBody(SMALL_BODY_BYTES));
  await next();
};

export const installAppRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/apps',
  operationId: 'installApp',
  tags: ['farm'],
  summary: 'Install an app under test: an uploaded APK, or a published artifact by sha256',
  description:
    'Body: the raw APK (streamed, at most the upload limit; `installArgs` and `keep` as query parameters), ' +
    'or JSON `{sha256, installArgs?, keep?}` naming an artifact of this bridge. The APK is verified by ' +
    "sha256 on its way and on the device after the install; a signature conflict is reported with pm's " +
    'failure code (details.failureCode), never resolved by uninstalling. Apps installed during a lease ' +
    'are uninstalled when it ends unless `keep`.',
  security: [{ bearer: [] }],
  middleware: [
    guard({ access: 'client', body: installPolicy, forward: true, expensive: true, upload: true }),
    smallJson,
  ] as const,
  request: {
    params: z.object({ id: LeaseIdParam }),
    query: InstallAppQuerySchema,
    body: {
      content: {
        'application/json': { schema: InstallAppJsonSchema },
        [APK_MEDIA_TYPE]: { schema: PUBLISH_APK },
        'application/octet-stream': { schema: PUBLISH_APK },
      },
      // Not required: the JSON validator runs for JSON bodies only; an APK body is streamed below.
      required: false,
    },
  },
  responses: {
    201: {
      description: 'installed and verified',
      content: { 'application/json': { schema: LeaseAppSchema } },
    },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, HELPER_ERRORS),
  },
});

export function registerInstallApp(app: OpenAPIHono<AppEnv>): void {
  app.openapi(installAppRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const query = c.req.valid('query');
    if (mediaTypeOf(c) === 'application/json') {
      if (query.installArgs !== undefined || query.keep !== undefined) {
        throw new BridgeError('INVALID_ARGUMENT', 'with a JSON body, give installArgs and keep in the body');
      }
      // Validated (the route's JSON validator) after smallJson read it under the limit.
      const { sha256, installArgs, keep } = InstallAppJsonSchema.parse(await c.req.json());
      const installed = await side.room.farm.installApp(
        side.scopes.local(scope),
        { sha256 },
        { ...(installArgs ? { installArgs } : {}), ...(keep === undefined ? {} : { keep }) },
      );
      return c.json(installed, 201);
    }
    const limit = maxBytesOf(c, installPolicy);
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit, 'the APK');
    const installArgs =
      query.installArgs === undefined ? undefined : parseInstallArgsString(query.installArgs);
    const { tmpDir } = c.get('services');
    await mkdir(tmpDir, { recursive: true });
    const file = path.join(tmpDir, `app-${randomUUID()}.apk`);
    try {
      const { digest } = await receiveApk(c, file, limit);
      const installed = await side.room.farm.installApp(
        side.scopes.local(scope),
        { file, sha256: digest.sha256 },
        { ...(installArgs ? { installArgs } : {}), keep: query.keep === 'true' },
      );
      return c.json(installed, 201);
    } finally {
      await rm(file, { force: true });
    }
  });
}
