import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { BridgeError } from '../../errors.ts';
import { validateManifest } from '../../manifest/index.ts';
import type { AppEnv } from '../env.ts';
import { errorResponses, FieldErrorSchema, ManifestSchema } from '../schemas.ts';

const Verdict = z
  .object({ valid: z.boolean(), errors: z.array(FieldErrorSchema), manifest: ManifestSchema.nullable() })
  .openapi('ManifestVerdict');

const MAX_MANIFEST_BYTES = 256 * 1024;

export function registerManifests(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/manifests/validate',
      summary: 'Validate a release manifest; 200 with the verdict whether valid or not',
      request: {
        body: {
          content: { 'application/json': { schema: z.unknown().openapi({ type: 'object' }) } },
          required: true,
        },
      },
      responses: {
        200: { description: 'the verdict', content: { 'application/json': { schema: Verdict } } },
        ...errorResponses(400, 413),
      },
    }),
    async (c) => {
      const text = await c.req.text();
      if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) {
        throw new BridgeError('PAYLOAD_TOO_LARGE', `a manifest is at most ${MAX_MANIFEST_BYTES} bytes`);
      }
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (err) {
        throw new BridgeError('INVALID_ARGUMENT', `request body is not JSON: ${(err as Error).message}`);
      }
      const verdict = validateManifest(raw);
      return c.json(verdict as z.infer<typeof Verdict>, 200);
    },
  );
}
