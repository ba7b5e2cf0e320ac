import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import {
  BODY_ERRORS,
  EDGE_ERRORS,
  errorResponses,
  MANIFEST_CANDIDATE,
  type ManifestVerdict,
  ManifestVerdictSchema,
} from '../../api/index.ts';
import { type BridgeError, type FieldError, isBridgeError } from '../../errors.ts';
import { validateReleaseManifest } from '../../manifest/index.ts';
import { readLimited } from '../body.ts';
import type { AppEnv } from '../env.ts';
import { parseJsonBody } from '../json-body.ts';
import { guard, JSON_TYPES } from '../middleware/guard.ts';

const MAX_MANIFEST_BYTES = 256 * 1024;

export function registerManifests(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/manifests/validate',
      operationId: 'validateManifest',
      tags: ['releases'],
      summary: 'Validate a release manifest; 200 with the verdict whether valid or not',
      security: [],
      middleware: guard({
        access: 'anyone',
        body: { maxBytes: MAX_MANIFEST_BYTES, types: JSON_TYPES, json: false },
      }),
      request: {
        body: {
          // A plain schema object, not zod: no route validator reads the body before the handler,
          // which reads it under the size limit and parses it strictly.
          content: { 'application/json': { schema: MANIFEST_CANDIDATE } },
          required: true,
        },
      },
      responses: {
        200: {
          description: 'the verdict',
          content: { 'application/json': { schema: ManifestVerdictSchema } },
        },
        ...errorResponses(EDGE_ERRORS, BODY_ERRORS),
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
        const verdict: ManifestVerdict = {
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
      return c.json(verdict, 200);
    },
  );
}
