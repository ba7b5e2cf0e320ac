import { createHash } from 'node:crypto';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  EDGE_ERRORS,
  errorResponses,
  HelperListSchema,
  HelperNameParam,
  ReleaseManifestSchema,
  VersionParam,
} from '../../api/index.ts';
import { BridgeError } from '../../errors.ts';
import type { ReleaseManifest } from '../../manifest/index.ts';
import { artifactKey } from '../../releases/layout.ts';
import type { AppEnv } from '../env.ts';

/** Presigned URLs are reused for half their lifetime so a manifest's ETag stays stable meanwhile. */
const presignMemo = new WeakMap<object, Map<string, { url: string; until: number }>>();

async function resolveApkUrl(c: Context<AppEnv>, manifest: ReleaseManifest): Promise<string | null> {
  if (manifest.apkUrl !== null) return manifest.apkUrl;
  const { store, config } = c.get('services');
  if (store.kind === 's3') {
    let memo = presignMemo.get(store);
    if (!memo) {
      memo = new Map();
      presignMemo.set(store, memo);
    }
    const hit = memo.get(manifest.sha256);
    if (hit && hit.until > Date.now()) return hit.url;
    const url = await store.downloadUrl(artifactKey(manifest.sha256));
    if (url !== null) {
      memo.set(manifest.sha256, { url, until: Date.now() + (config.s3PresignSeconds * 1000) / 2 });
      return url;
    }
  }
  // Configuration only, never the request's Host (see public-url.ts).
  const base = c.get('services').publicUrl;
  if (base === undefined) {
    throw new BridgeError(
      'UNAVAILABLE',
      'this bridge has no public URL for artifacts (DEVICEBRIDGE_PUBLIC_URL)',
    );
  }
  return `${base.replace(/\/+$/, '')}/v1/artifacts/${manifest.sha256}`;
}

/** Serve a manifest with a strong ETag over the exact body and `If-None-Match` → 304. */
async function sendManifest(c: Context<AppEnv>, manifest: ReleaseManifest, cacheControl: string) {
  const served = { ...manifest, apkUrl: await resolveApkUrl(c, manifest) };
  const body = JSON.stringify(served);
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
  c.header('ETag', etag);
  c.header('Cache-Control', cacheControl);
  if (etagMatches(c.req.header('if-none-match'), etag)) return c.body(null, 304);
  // c.json serializes with the same JSON.stringify: the ETag is over the exact body sent.
  return c.json(served, 200);
}

export function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

const manifestResponses = {
  200: {
    description: 'the release manifest (any kind)',
    content: { 'application/json': { schema: ReleaseManifestSchema } },
  },
  304: { description: 'not modified (If-None-Match matched the ETag)' },
  ...errorResponses(EDGE_ERRORS, 'INVALID_ARGUMENT', 'NOT_FOUND', 'UNAVAILABLE'),
};

export function registerHelpers(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/helpers',
      operationId: 'listHelpers',
      tags: ['releases'],
      summary: 'List helpers and their published versions',
      security: [],
      responses: {
        200: { description: 'helpers', content: { 'application/json': { schema: HelperListSchema } } },
        ...errorResponses(EDGE_ERRORS),
      },
    }),
    async (c) => c.json({ helpers: await c.get('services').releases.listHelpers() }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/helpers/{name}/manifest',
      operationId: 'getLatestManifest',
      tags: ['releases'],
      summary: 'The latest release manifest of a helper',
      security: [],
      request: { params: z.object({ name: HelperNameParam }) },
      responses: manifestResponses,
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const manifest = await c.get('services').releases.getLatestRelease(name);
      if (manifest === null)
        throw new BridgeError(
          'NOT_FOUND',
          `helper ${name} has no published release; publish one with devicebridge release publish (see docs/publishing.md)`,
        );
      return sendManifest(c, manifest, 'public, max-age=60, must-revalidate');
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/helpers/{name}/versions/{version}/manifest',
      operationId: 'getManifest',
      tags: ['releases'],
      summary: 'The release manifest of one helper version (immutable)',
      security: [],
      request: { params: z.object({ name: HelperNameParam, version: VersionParam }) },
      responses: manifestResponses,
    }),
    async (c) => {
      const { name, version } = c.req.valid('param');
      const manifest = await c.get('services').releases.getRelease(name, version);
      if (manifest === null) throw new BridgeError('NOT_FOUND', `helper ${name} has no release ${version}`);
      return sendManifest(c, manifest, 'public, max-age=300');
    },
  );
}
