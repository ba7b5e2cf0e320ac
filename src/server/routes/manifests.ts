import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { type BridgeError, type FieldError, isBridgeError } from '../../errors.ts';
import { validateReleaseManifest } from '../../manifest/index.ts';
import { readLimited } from '../body.ts';
import type { AppEnv } from '../env.ts';
import { parseJsonBody } from '../json-body.ts';
import { guard, JSON_TYPES } from '../middleware/guard.ts';
import { errorResponses, FieldErrorSchema, ManifestSchema } from '../schemas.ts';

const Verdict = z
  .object({
    valid: z.boolean(),
    errors: z.array(FieldErrorSchema),
    // A union, not `.nullable()`: the document rendered that as allOf[HelperManifest, object|null],
    // which no null satisfies (found by the HTTP fuzz suite).
    manifest: z.union([ManifestSchema, z.null()]),
  })
  .openapi('ManifestVerdict');

const MAX_MANIFEST_BYTES = 256 * 1024;

export function registerManifests(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/manifests/validate',
      summary: 'Validate a release manifest; 200 with the verdict whether valid or not',
      middleware: guard({
        access: 'anyone',
        body: { maxBytes: MAX_MANIFEST_BYTES, types: JSON_TYPES, json: false },
      }),
      request: {
        body: {
          // A plain schema object, not zod: no route validator reads the body before the handler,
          // which reads it under the size limit and parses it strictly.
          content: { 'application/json': { schema: { type: 'object' } } },
          required: true,
        },
      },
      responses: {
        200: { description: 'the verdict', content: { 'application/json': { schema: Verdict } } },
        ...errorResponses(400, 413, 415),
      },
    }),
    async (c) => {
      let raw: unknown;
      try {
        raw = parseJsonBody(await readLimited(c, MAX_MANIFEST_BYTES), MAX_MANIFEST_BYTES);
      } catch (err) {
        // Well-formed JSON the strict parser refuses (a duplicate or prototype key, nesting past the
        // depth limit) is an invalid manifest: the verdict names the rule, the limit and the path.
        const rule = isBridgeError(err) ? err.details?.['rule'] : undefined;
        if (rule !== 'duplicate-key' && rule !== 'prototype-key' && rule !== 'depth') throw err;
        const errors = ((err as BridgeError).details?.['errors'] ?? []) as FieldError[];
        const verdict = {
          valid: false,
          manifest: null,
          errors: errors.map((e) => ({
            path: e.path.replace(/^\$\.?/, ''),
            message: (err as BridgeError).message.replace(
              /^request body: JSON: /,
              'manifest is not acceptable JSON: ',
            ),
          })),
        };
        return c.json(verdict, 200);
      }
      const verdict = validateReleaseManifest(raw);
      return c.json(verdict as z.infer<typeof Verdict>, 200);
    },
  );
}
