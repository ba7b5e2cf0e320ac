/**
 * Contract of what the helper and manifest routes answer: release manifests of each kind, the helper
 * list, a publish's result and a manifest's verdict. Apart from the parameters and bodies
 * (helpers.ts, which re-exports this) because those use the manifest module's checks, which import
 * Node modules: the console's browser code takes these types from here and is typechecked without
 * Node's types.
 */
import { z } from '@hono/zod-openapi';
import { FieldErrorSchema } from './errors.ts';

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

/** One helper in the list: its published versions and the latest. */
export const HelperSummarySchema = z.object({
  name: z.string(),
  latest: z.string().nullable(),
  versions: z.array(z.string()),
});

export const HelperListSchema = z.object({ helpers: z.array(HelperSummarySchema) }).openapi('HelperList');

export const ManifestVerdictSchema = z
  .object({
    valid: z.boolean(),
    errors: z.array(FieldErrorSchema),
    // A union, not `.nullable()`: the document rendered that as allOf[HelperManifest, object|null],
    // which no null satisfies (found by the HTTP fuzz suite).
    manifest: z.union([ReleaseManifestSchema, z.null()]),
  })
  .openapi('ManifestVerdict');

export const PublishResultSchema = z
  .object({
    status: z.enum(['published', 'unchanged']),
    latest: z.boolean(),
    manifest: ReleaseManifestSchema,
  })
  .openapi('PublishResult');

export type HelperManifestBody = z.infer<typeof ManifestSchema>;
export type ReleaseManifestBody = z.infer<typeof ReleaseManifestSchema>;
export type HelperSummary = z.output<typeof HelperSummarySchema>;
export type HelperListResponse = z.infer<typeof HelperListSchema>;
export type ManifestVerdict = z.infer<typeof ManifestVerdictSchema>;
export type PublishResult = z.infer<typeof PublishResultSchema>;
