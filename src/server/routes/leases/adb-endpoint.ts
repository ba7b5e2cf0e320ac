import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { parseAdbPublicKey } from '../../../adb/adb-public-key.ts';
import type { AdbEndpoint } from '../../../api/adb-endpoint.ts';
import {
  AdbEndpointBodySchema,
  AdbEndpointSchema,
  BODY_ERRORS,
  errorResponses,
  LEASE_ERRORS,
  LeaseIdParam,
  SECURED_ERRORS,
} from '../../../api/index.ts';
import type { AppEnv } from '../../env.ts';
import { guard, jsonBody } from '../../middleware/guard.ts';
import { SMALL_BODY_BYTES, scopeFor } from './common.ts';

export const adbEndpointRoute = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/adb',
  operationId: 'openAdbEndpoint',
  tags: ['remote adb'],
  summary:
    "Open the lease's adb endpoint for a client key (`adb connect` the answer; needs the `adb` token capability)",
  description:
    'A TCP listener speaking adbd’s protocol: only the registered key authenticates; every stream is relayed ' +
    'to the leased device. It closes when the lease ends. Opening again with the same key answers the same endpoint. ' +
    'The endpoint is a full shell as the shell user and installs with any flags (outside the installArgs ' +
    'allowlist), so it needs the `adb` capability: a client token without it gets 403 PERMISSION_DENIED ' +
    '(`details.capability`: `adb`), whatever else it holds.',
  security: [{ bearer: [] }],
  middleware: guard({ access: 'client', capability: 'adb', body: jsonBody(SMALL_BODY_BYTES), forward: true }),
  request: {
    params: z.object({ id: LeaseIdParam }),
    body: { content: { 'application/json': { schema: AdbEndpointBodySchema } }, required: true },
  },
  responses: {
    200: {
      description: 'the endpoint to `adb connect`',
      content: { 'application/json': { schema: AdbEndpointSchema } },
    },
    ...errorResponses(
      SECURED_ERRORS,
      BODY_ERRORS,
      LEASE_ERRORS,
      'DEVICE_OFFLINE',
      'UNAUTHORIZED_DEVICE',
      'TIMEOUT',
    ),
  },
});

export function registerAdbEndpoint(app: OpenAPIHono<AppEnv>): void {
  app.openapi(adbEndpointRoute, async (c) => {
    const { side, scope } = await scopeFor(c, c.req.valid('param').id);
    const { publicKey } = c.req.valid('json');
    const key = parseAdbPublicKey(publicKey);
    const tenant = scope.lease.tenant;
    const quota = c.get('services').auth.quotaOf(tenant);
    const opened = await side.room.adb.open(
      side.scopes.local(scope),
      key,
      quota === undefined ? undefined : { tenant, limit: quota.adbEndpoints },
    );
    const endpoint: AdbEndpoint = {
      endpoint: opened.endpoint,
      host: opened.host,
      port: opened.port,
      serial: opened.serial,
      keyFingerprint: opened.keyFingerprint,
      leaseId: scope.lease.id,
      deviceId: scope.lease.deviceId,
    };
    return c.json(endpoint, 200);
  });
}
