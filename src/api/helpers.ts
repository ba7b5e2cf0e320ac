/** Contract of the helper, manifest, release and artifact routes: parameters, bodies and answers. */
import { z } from '@hono/zod-openapi';
import {
  HELPER_NAME_RE,
  HELPER_NAME_RULE,
  MANIFEST_KINDS,
  type ManifestKind,
  SEMVER_RE,
} from '../manifest/index.ts';

// What the routes answer (manifests, the helper list, publish results, verdicts): their own
// module, free of the manifest checks' Node imports, so the console's browser code can take its
// types from there.
export * from './release-manifests.ts';

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

export type PublishQuery = z.input<typeof PublishQuerySchema>;
