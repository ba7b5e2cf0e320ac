import { createHash } from 'node:crypto';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  BinarySchema,
  errorResponses,
  HELPER_ERRORS,
  LEASE_ERRORS,
  LeaseIdParam,
  PNG_MEDIA_TYPE,
  ScreenshotQuerySchema,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard } from '../../middleware/guard.ts';
import { etagMatches } from '../helpers.ts';
import { scopeFor } from './common.ts';

export const screenshotRoute = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/screenshot',
  operationId: 'getScreenshot',
  tags: ['helper operations'],
  summary: 'The leased device’s screen as PNG (`screencap -p` over adb exec; strong ETag over the bytes)',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', forward: true, expensive: true }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    query: ScreenshotQuerySchema,
  },
  responses: {
    200: {
      description: 'the PNG; `X-Screen-Width` and `X-Screen-Height` give its size',
      headers: {
        ETag: { description: 'sha256 of the PNG (If-None-Match → 304)', schema: { type: 'string' } },
        'X-Screen-Width': { description: 'width in pixels', schema: { type: 'integer' } },
        'X-Screen-Height': { description: 'height in pixels', schema: { type: 'integer' } },
      },
      content: { [PNG_MEDIA_TYPE]: { schema: BinarySchema } },
    },
    304: { description: 'not modified (If-None-Match matched the ETag)' },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS, HELPER_ERRORS),
  },
});

export function registerScreenshot(app: OpenAPIHono<AppEnv>): void {
  app.openapi(screenshotRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const { deadlineMs } = c.req.valid('query');
    const shot = await side.helpers.screenshot(scope, deadlineMs === undefined ? {} : { deadlineMs });
    const etag = `"${createHash('sha256').update(shot.png).digest('hex').slice(0, 32)}"`;
    const headers = {
      ETag: etag,
      'X-Screen-Width': String(shot.header.width),
      'X-Screen-Height': String(shot.header.height),
    };
    if (etagMatches(c.req.header('if-none-match'), etag)) return c.body(null, 304, headers);
    // A view over execOut's bytes, not a second copy of the PNG.
    const png = new Uint8Array(shot.png.buffer as ArrayBuffer, shot.png.byteOffset, shot.png.byteLength);
    return c.body(png, 200, { ...headers, 'Content-Type': PNG_MEDIA_TYPE });
  });
}
