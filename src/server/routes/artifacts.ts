import { Readable } from 'node:stream';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { APK_MEDIA_TYPE, BinarySchema, EDGE_ERRORS, errorResponses, Sha256Param } from '../../api/index.ts';
import { BridgeError } from '../../errors.ts';
import { artifactKey } from '../../releases/layout.ts';
import type { AppEnv } from '../env.ts';
import { parseRange } from '../range.ts';
import { etagMatches } from './helpers.ts';

const APK_TYPE = APK_MEDIA_TYPE;

export function registerArtifacts(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/artifacts/{sha256}',
      operationId: 'getArtifact',
      tags: ['releases'],
      summary: 'Artifact bytes by sha256 (GET and HEAD; single byte ranges; strong ETag)',
      security: [],
      request: { params: z.object({ sha256: Sha256Param }) },
      responses: {
        200: {
          description: 'the artifact',
          content: { [APK_TYPE]: { schema: BinarySchema } },
        },
        206: {
          description: 'a byte range of the artifact (Content-Range)',
          content: { [APK_TYPE]: { schema: BinarySchema } },
        },
        304: { description: 'not modified (If-None-Match matched the ETag)' },
        416: { description: 'range not satisfiable (Content-Range: bytes */size)' },
        ...errorResponses(EDGE_ERRORS, 'INVALID_ARGUMENT', 'NOT_FOUND'),
      },
    }),
    async (c) => {
      const { sha256 } = c.req.valid('param');
      const store = c.get('services').store;
      const key = artifactKey(sha256);
      const info = await store.stat(key);
      if (info === null) throw new BridgeError('NOT_FOUND', `no artifact with sha256 ${sha256}`);
      const etag = `"${sha256}"`;
      const headers: Record<string, string> = {
        'Content-Type': APK_TYPE,
        ETag: etag,
        'Accept-Ranges': 'bytes',
        'Cache-Control': 'public, max-age=31536000, immutable',
        'Last-Modified': info.lastModified.toUTCString(),
      };
      if (etagMatches(c.req.header('if-none-match'), etag)) return c.body(null, 304, headers);

      // If-Range with a different validator means: send the whole thing.
      const ifRange = c.req.header('if-range');
      const range =
        ifRange !== undefined && ifRange !== etag
          ? { kind: 'full' as const }
          : parseRange(c.req.header('range'), info.size);
      if (range.kind === 'unsatisfiable') {
        return c.body(null, 416, { ...headers, 'Content-Range': `bytes */${info.size}` });
      }
      const isHead = c.req.method === 'HEAD';
      const start = range.kind === 'partial' ? range.start : 0;
      const end = range.kind === 'partial' ? range.end : info.size - 1;
      const length = info.size === 0 ? 0 : end - start + 1;
      headers['Content-Length'] = String(length);
      const status = range.kind === 'partial' ? 206 : 200;
      if (range.kind === 'partial') headers['Content-Range'] = `bytes ${start}-${end}/${info.size}`;
      if (isHead || length === 0) return c.body(null, status, headers);

      const opened = await store.openRead(key, range.kind === 'partial' ? { start, end } : undefined);
      if (opened === null) throw new BridgeError('NOT_FOUND', `no artifact with sha256 ${sha256}`);
      const body = Readable.toWeb(Readable.from(opened.stream)) as ReadableStream<Uint8Array>;
      return c.body(body, status, headers);
    },
  );
}
