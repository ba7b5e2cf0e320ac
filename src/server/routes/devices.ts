import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  BODY_ERRORS,
  DeviceIdParam,
  DeviceListSchema,
  DeviceSchema,
  errorResponses,
  RegisterDeviceBodySchema,
  RemoveDeviceQuerySchema,
  SECURED_ERRORS,
} from '../../api/index.ts';
import type { DeviceSide } from '../../app/index.ts';
import { BridgeError } from '../../errors.ts';
import type { AppEnv, Services } from '../env.ts';
import { assertRole } from '../middleware/auth.ts';
import { guard, jsonBody } from '../middleware/guard.ts';
import { forwardToOwner, PROXIED_HEADER } from '../middleware/owner-proxy.ts';

/** The device id rule (defined in the contract, src/api/devices.ts). */
export { DeviceIdParam };

/** The largest `POST /v1/devices` body. */
const DEVICE_BODY_BYTES = 16 * 1024;

/** The device side's use cases, or UNAVAILABLE when this node drives no devices. */
export function requireDevices(services: Services): DeviceSide {
  if (!services.deviceSide) {
    throw new BridgeError('UNAVAILABLE', 'this bridge node does not drive devices');
  }
  return services.deviceSide;
}

export function registerDevices(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/devices',
      operationId: 'listDevices',
      tags: ['devices'],
      summary: 'Devices this bridge knows, with state, properties and whether they are leased',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client' }),
      responses: {
        200: {
          description: 'devices',
          content: { 'application/json': { schema: DeviceListSchema } },
        },
        ...errorResponses(SECURED_ERRORS, 'UNAVAILABLE'),
      },
    }),
    async (c) => {
      const caller = assertRole(c.get('principal'), 'client');
      const devices = await requireDevices(c.get('services')).devices.list(caller);
      return c.json({ devices }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/devices',
      operationId: 'registerDevice',
      tags: ['devices'],
      summary: 'Admin: register a remote ADB tunnel (host:port must pass the tunnel allowlist)',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin', body: jsonBody(DEVICE_BODY_BYTES) }),
      request: {
        body: { content: { 'application/json': { schema: RegisterDeviceBodySchema } }, required: true },
      },
      responses: {
        201: { description: 'registered', content: { 'application/json': { schema: DeviceSchema } } },
        ...errorResponses(SECURED_ERRORS, BODY_ERRORS, 'CONFLICT', 'UNAVAILABLE'),
      },
    }),
    async (c) => {
      const caller = assertRole(c.get('principal'), 'admin');
      const body = c.req.valid('json');
      const device = await requireDevices(c.get('services')).devices.register(caller, {
        endpoint: body.endpoint,
        // Raw labels: the registry validates them and keeps every key (zod's record output drops `__proto__`).
        ...(body.labels
          ? { labels: ((await c.req.json()) as { labels: Record<string, string> }).labels }
          : {}),
        ...(body.provider ? { provider: body.provider } : {}),
      });
      c.get('logger').info({ deviceId: device.id, state: device.state }, 'device registered');
      return c.json(device, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/devices/{id}',
      operationId: 'removeDevice',
      tags: ['devices'],
      summary: 'Admin: forget a device (refused while it is leased unless ?force=true)',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin' }),
      request: {
        params: z.object({ id: DeviceIdParam }),
        query: RemoveDeviceQuerySchema,
      },
      responses: {
        204: { description: 'removed' },
        ...errorResponses(SECURED_ERRORS, 'INVALID_ARGUMENT', 'NOT_FOUND', 'CONFLICT', 'UNAVAILABLE'),
      },
    }),
    async (c) => {
      assertRole(c.get('principal'), 'admin');
      const { id } = c.req.valid('param');
      const side = requireDevices(c.get('services'));
      // The owner drives the device (and re-publishes what it drives): the removal runs there,
      // forwarded once like a lease-scoped call; a dead owner's device is removed here.
      if (c.req.header(PROXIED_HEADER) === undefined) {
        const owner = await side.devices.ownerElsewhere(id);
        if (owner !== null) return forwardToOwner<Response>(c, { lease: { deviceId: id }, owner }, 0);
      }
      await side.devices.remove(id, {
        force: c.req.valid('query').force === 'true',
      });
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/devices/{id}/clear-quarantine',
      operationId: 'clearDeviceQuarantine',
      tags: ['devices'],
      summary: 'Admin: put a quarantined device back into service',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin' }),
      request: { params: z.object({ id: DeviceIdParam }) },
      responses: {
        200: { description: 'the device', content: { 'application/json': { schema: DeviceSchema } } },
        ...errorResponses(SECURED_ERRORS, 'INVALID_ARGUMENT', 'NOT_FOUND', 'CONFLICT', 'UNAVAILABLE'),
      },
    }),
    async (c) => {
      const caller = assertRole(c.get('principal'), 'admin');
      const device = await requireDevices(c.get('services')).devices.clearQuarantine(
        caller,
        c.req.valid('param').id,
      );
      return c.json(device, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/devices/{id}/baseline',
      operationId: 'recordDeviceBaseline',
      tags: ['devices'],
      summary:
        'Admin: record what the reset between tenants restores the device to (its packages, files, settings and shell processes now); refused while it is leased',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin' }),
      request: { params: z.object({ id: DeviceIdParam }) },
      responses: {
        200: { description: 'the device', content: { 'application/json': { schema: DeviceSchema } } },
        ...errorResponses(
          SECURED_ERRORS,
          'INVALID_ARGUMENT',
          'NOT_FOUND',
          'CONFLICT',
          'DEVICE_OFFLINE',
          'UNAVAILABLE',
          'TIMEOUT',
        ),
      },
    }),
    async (c) => {
      const caller = assertRole(c.get('principal'), 'admin');
      const { id } = c.req.valid('param');
      const side = requireDevices(c.get('services'));
      // Read from the device: on the node that drives it (forwarded once).
      if (c.req.header(PROXIED_HEADER) === undefined) {
        const owner = await side.devices.ownerElsewhere(id);
        if (owner !== null) return forwardToOwner(c, { lease: { deviceId: id }, owner }, 0);
      }
      const device = await side.devices.recordBaseline(caller, id);
      c.get('logger').info({ deviceId: id }, 'device baseline recorded');
      return c.json(device, 200);
    },
  );
}
