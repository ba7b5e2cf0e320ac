/** Schemas shared by several routes (error envelope, common parameters), feeding the OpenAPI doc. */
import { z } from '@hono/zod-openapi';
import { ERROR_CODES } from '../errors.ts';
import { HELPER_NAME_RE, HELPER_NAME_RULE, SEMVER_RE } from '../manifest/index.ts';

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]]),
      message: z.string(),
      requestId: z.string(),
      retryable: z.boolean(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .openapi('Error');

export function errorResponses(...statuses: number[]) {
  const out: Record<
    number,
    { description: string; content: { 'application/json': { schema: typeof ErrorSchema } } }
  > = {};
  for (const status of statuses) {
    const codes = Object.entries(ERROR_CODES)
      .filter(([, v]) => v.status === status)
      .map(([k]) => k);
    out[status] = {
      description: `Error (${codes.join(', ') || 'see code'})`,
      content: { 'application/json': { schema: ErrorSchema } },
    };
  }
  return out;
}

export const HelperNameParam = z
  .string()
  .regex(HELPER_NAME_RE, HELPER_NAME_RULE)
  .openapi({ param: { name: 'name', in: 'path' }, example: 'android-snapshot-helper' });

export const VersionParam = z
  .string()
  .max(256)
  .regex(SEMVER_RE, 'must be a semantic version')
  .openapi({ param: { name: 'version', in: 'path' }, example: '0.13.3' });

export const Sha256Param = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters')
  .transform((s) => s.toLowerCase())
  .openapi({
    param: { name: 'sha256', in: 'path' },
    example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  });

export const FieldErrorSchema = z.object({ path: z.string(), message: z.string() }).openapi('FieldError');

/** Release manifests are validated by the manifest module; the document shows their shape. */
export const ManifestSchema = z
  .object({
    name: z.string(),
    version: z.string(),
    releaseTag: z.string().optional(),
    assetName: z.string().optional(),
    apkUrl: z.string().nullable(),
    sha256: z.string(),
    checksumName: z.string().optional(),
    packageName: z.string(),
    versionCode: z.number().int(),
    instrumentationRunner: z.string().optional(),
    minSdk: z.number().int(),
    targetSdk: z.number().int(),
    outputFormat: z.string().optional(),
    statusProtocol: z.string().optional(),
    installArgs: z.array(z.string()),
    sizeBytes: z.number().int().optional(),
    signingCertSha256: z.string().optional(),
  })
  .passthrough()
  .openapi('HelperManifest');
