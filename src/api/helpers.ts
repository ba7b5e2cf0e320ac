/** Contract of the helper, manifest, release and artifact routes: parameters, bodies and answers. */
import { z } from '@hono/zod-openapi';
import {
  HELPER_NAME_RE,
  HELPER_NAME_RULE,
  MANIFEST_KINDS,
  type ManifestKind,
  SEMVER_RE,
} from '../manifest/index.ts';
import { FieldErrorSchema } from './errors.ts';

export const APK_MEDIA_TYPE = 'application/vnd.android.package-archive';

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

/**
 * Release manifests are validated by the manifest module (src/manifest/schema.ts, kinds.ts); the
 * document shows their shapes. `kind` tells them apart; absent means an instrumentation APK.
 */
const manifestCommon = {
  name: z.string(),
  version: z.string(),
  releaseTag: z.string().optional(),
  assetName: z.string().optional(),
  apkUrl: z.string().nullable(),
  sha256: z.string(),
  checksumName: z.string().optional(),
  sizeBytes: z.number().int().optional(),
};

export const ManifestSchema = z
  .object({
    kind: z.literal('instrumentation-apk').optional(),
    ...manifestCommon,
    packageName: z.string(),
    versionCode: z.number().int(),
    instrumentationRunner: z.string().optional(),
    minSdk: z.number().int(),
    targetSdk: z.number().int(),
    outputFormat: z.string().optional(),
    statusProtocol: z.string().optional(),
    installArgs: z.array(z.string()),
    signingCertSha256: z.string().optional(),
  })
  .passthrough()
  .openapi('HelperManifest');

export const AppProcessJarManifestSchema = z
  .object({
    kind: z.literal('app-process-jar'),
    ...manifestCommon,
    mainClass: z.string().openapi({ example: 'dev.devicebridge.glassagent.Main' }),
    socketName: z.string().openapi({ example: 'glass-agent' }),
    devicePath: z.string().openapi({ example: '/data/local/tmp/glass-agent.jar' }),
    minSdk: z.number().int().optional(),
  })
  .passthrough()
  .openapi('AppProcessJarManifest');

export const AccessibilityServiceManifestSchema = z
  .object({
    kind: z.literal('accessibility-service-apk'),
    ...manifestCommon,
    packageName: z.string(),
    versionCode: z.number().int(),
    minSdk: z.number().int(),
    targetSdk: z.number().int(),
    installArgs: z.array(z.string()),
    serviceComponent: z
      .string()
      .openapi({ example: 'dev.devicebridge.glassa11y/.GlassAccessibilityService' }),
    socketName: z.string().openapi({ example: 'glass-a11y' }),
    signingCertSha256: z.string().optional(),
  })
  .passthrough()
  .openapi('AccessibilityServiceManifest');

/** A manifest of any kind (what the manifest routes serve and publish answers). */
export const ReleaseManifestSchema = z
  .union([ManifestSchema, AppProcessJarManifestSchema, AccessibilityServiceManifestSchema])
  .openapi('ReleaseManifest');

export const HelperListSchema = z
  .object({
    helpers: z.array(
      z.object({ name: z.string(), latest: z.string().nullable(), versions: z.array(z.string()) }),
    ),
  })
  .openapi('HelperList');

export const ManifestVerdictSchema = z
  .object({
    valid: z.boolean(),
    errors: z.array(FieldErrorSchema),
    // A union, not `.nullable()`: the document rendered that as allOf[HelperManifest, object|null],
    // which no null satisfies (found by the HTTP fuzz suite).
    manifest: z.union([ReleaseManifestSchema, z.null()]),
  })
  .openapi('ManifestVerdict');

/**
 * `POST /v1/manifests/validate` takes any JSON object (the verdict says what is wrong with it). A
 * plain JSON Schema, not zod: a zod body schema would make the route validate (and so read) the body
 * before its handler reads it under the size limit.
 */
export const MANIFEST_CANDIDATE = {
  type: 'object' as const,
  description: 'a release manifest to check (any JSON object)',
};

export const PublishQuerySchema = z.object({
  version: z
    .string()
    .max(256)
    .optional()
    .openapi({ description: 'release version (semver); or a form field' }),
  installArgs: z.string().max(64).optional().openapi({ example: 'install -r -t' }),
  runner: z.string().max(512).optional().openapi({ example: 'com.example.helper/.Instrumentation' }),
  kind: z
    .enum(MANIFEST_KINDS)
    .optional()
    .openapi({ description: 'what the artifact is (default instrumentation-apk)' }),
  mainClass: z.string().max(512).optional().openapi({ example: 'dev.devicebridge.glassagent.Main' }),
  socketName: z.string().max(64).optional().openapi({ example: 'glass-agent' }),
  devicePath: z.string().max(512).optional().openapi({ example: '/data/local/tmp/glass-agent.jar' }),
  serviceComponent: z
    .string()
    .max(512)
    .optional()
    .openapi({ example: 'dev.devicebridge.glassa11y/.GlassAccessibilityService' }),
});

/** Raw bytes: an APK upload or an artifact download. */
export const BinarySchema = z.string().openapi({ format: 'binary' });

/**
 * The bodies of a publish, as plain JSON Schema: a zod schema for a form or JSON body would make the
 * route parse (and so buffer) the body before its handler streams it under the upload limit.
 */
export const PUBLISH_FORM = {
  type: 'object' as const,
  required: ['apk'],
  properties: {
    apk: {
      type: 'string' as const,
      format: 'binary',
      description: 'the APK, or the dex jar of an app-process-jar (the only file part)',
    },
    version: {
      type: 'string' as const,
      maxLength: 1024,
      description: 'release version (semver); or the query',
    },
    installArgs: { type: 'string' as const, maxLength: 1024, example: 'install -r -t' },
    runner: { type: 'string' as const, maxLength: 1024, example: 'com.example.helper/.Instrumentation' },
    kind: { type: 'string' as const, enum: [...MANIFEST_KINDS], description: 'default instrumentation-apk' },
    mainClass: { type: 'string' as const, maxLength: 1024, example: 'dev.devicebridge.glassagent.Main' },
    socketName: { type: 'string' as const, maxLength: 1024, example: 'glass-agent' },
    devicePath: { type: 'string' as const, maxLength: 1024, example: '/data/local/tmp/glass-agent.jar' },
    serviceComponent: {
      type: 'string' as const,
      maxLength: 1024,
      example: 'dev.devicebridge.glassa11y/.GlassAccessibilityService',
    },
  },
  additionalProperties: false,
};
export const PUBLISH_APK = {
  type: 'string' as const,
  format: 'binary',
  description: 'the raw APK (or dex jar)',
};

/** The text fields of a publish (form fields or query parameters; `installArgs` as words). */
export interface PublishFields {
  version?: string;
  installArgs?: string;
  runner?: string;
  kind?: ManifestKind;
  mainClass?: string;
  socketName?: string;
  devicePath?: string;
  serviceComponent?: string;
}

/** The fields of a multipart publish. */
export interface PublishForm extends PublishFields {
  apk: Blob;
}

export const PublishResultSchema = z
  .object({
    status: z.enum(['published', 'unchanged']),
    latest: z.boolean(),
    manifest: ReleaseManifestSchema,
  })
  .openapi('PublishResult');

export type HelperManifestBody = z.infer<typeof ManifestSchema>;
export type ReleaseManifestBody = z.infer<typeof ReleaseManifestSchema>;
export type HelperListResponse = z.infer<typeof HelperListSchema>;
export type ManifestVerdict = z.infer<typeof ManifestVerdictSchema>;
export type PublishQuery = z.input<typeof PublishQuerySchema>;
export type PublishResult = z.infer<typeof PublishResultSchema>;
