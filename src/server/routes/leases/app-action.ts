import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  AppActionBodySchema,
  AppActionParam,
  AppActionResultSchema,
  BODY_ERRORS,
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  PackageNameParam,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import { BridgeError } from '../../../errors.ts';
import { assertPackageName } from '../../../helpers/farm/apps.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { SMALL_BODY_BYTES, scopeFor } from './common.ts';

const APP_ERRORS = ['DEVICE_OFFLINE', 'UNAUTHORIZED_DEVICE', 'TIMEOUT'] as const;

export const appActionRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/apps/{package}/{action}',
  operationId: 'appAction',
  tags: ['farm'],
  summary: 'Launch (`am start`), stop (`am force-stop`) or clear the data of (`pm clear`) an app',
  description:
    'launch starts the launcher activity, or `component` (PKG/.Class); an intent that does not resolve is 409.',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', body: jsonBody(SMALL_BODY_BYTES), forward: true }),
  request: {
    params: z.object({ id: LeaseIdParam, package: PackageNameParam, action: AppActionParam }),
    body: { content: { 'application/json': { schema: AppActionBodySchema } }, required: false },
  },
  responses: {
    200: { description: 'done', content: { 'application/json': { schema: AppActionResultSchema } } },
    ...errorResponses(SECURED_ERRORS, BODY_ERRORS, LEASE_ERRORS, APP_ERRORS),
  },
});

export const uninstallAppRoute = createRoute({
  method: 'delete',
  path: '/v1/leases/{id}/apps/{package}',
  operationId: 'uninstallApp',
  tags: ['farm'],
  summary: 'Uninstall an app (`pm uninstall`)',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', forward: true }),
  request: { params: z.object({ id: LeaseIdParam, package: PackageNameParam }) },
  responses: {
    200: { description: 'uninstalled', content: { 'application/json': { schema: AppActionResultSchema } } },
    ...errorResponses(SECURED_ERRORS, LEASE_ERRORS, APP_ERRORS),
  },
});

export function registerAppActions(app: OpenAPIHono<AppEnv>): void {
  app.openapi(appActionRoute, async (c) => {
    const params = c.req.valid('param');
    const { side, scope } = await scopeFor(c, params.id);
    const body = AppActionBodySchema.safeParse(await c.req.json().catch(() => ({})));
    if (!body.success) throw new BridgeError('INVALID_ARGUMENT', `body: ${body.error.issues[0]?.message}`);
    if (body.data.component !== undefined && params.action !== 'launch') {
      throw new BridgeError('INVALID_ARGUMENT', `component is for launch, not ${params.action}`);
    }
    assertPackageName(params.package);
    const target = side.scopes.local(scope);
    return c.json(
      await side.room.farm.appAction(target, params.package, params.action, body.data.component),
      200,
    );
  });
  app.openapi(uninstallAppRoute, async (c) => {
    const params = c.req.valid('param');
    const { side, scope } = await scopeFor(c, params.id);
    assertPackageName(params.package);
    return c.json(await side.room.farm.appAction(side.scopes.local(scope), params.package, 'uninstall'), 200);
  });
}
