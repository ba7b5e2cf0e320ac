import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { DeviceSide } from '../../app/index.ts';
import { DeviceIdSchema } from '../../devices/labels.ts';
import { BridgeError } from '../../errors.ts';
import type { AppEnv, Services } from '../env.ts';
import { assertRole } from '../middleware/auth.ts';
import { guard, jsonBody } from '../middleware/guard.ts';
import { errorResponses } from '../schemas.ts';

export const DeviceIdParam = DeviceIdSchema.meta({
  param: { name: 'id', in: 'path' },
  example: '127.0.0.1-5555',
});

const Device = z
  .object({
    id: z.string(),
    serial: z.string(),
    endpoint: z.string().optional(),
    provider: z.string().optional(),
    labels: z.record(z.string(), z.string()),
    state: z.enum(['online', 'offline', 'unauthorized', 'quarantined']),
    quarantineReason: z.string().optional(),
    properties: z.object({
      sdk: z.number().int().optional(),
      release: z.string().optional(),
      model: z.string().optional(),
      manufacturer: z.string().optional(),
      abi: z.string().optional(),
    }),
    helpers: z.record(
      z.string(),
      z.object({ versionCode: z.number(), sha256: z.string(), checkedAt: z.number() }),
    ),
    source: z.string(),
    ownerNode: z.string(),
    /** The active lease, shown to its tenant and to admins only. */
    leaseId: z.string().nullable(),
    leased: z.boolean(),
  })
  .openapi('Device');

/** The largest `POST /v1/devices` body. */
const DEVICE_BODY_BYTES = 16 * 1024;

const RegisterBody = z
  .object({
    endpoint: z.string().min(3).max(300).openapi({ example: '127.0.0.1:5555' }),
    labels: z.record(z.string(), z.string()).optional(),
    provider: z.string().max(64).optional(),
  })
  .strict()
  .openapi('RegisterDevice');

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
      summary: 'Devices this bridge knows, with state, properties and whether they are leased',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'client' }),
      responses: {
        200: {
          description: 'devices',
          content: { 'application/json': { schema: z.object({ devices: z.array(Device) }) } },
        },
        ...errorResponses(401, 403, 503),
      },
    }),
    async (c) => {
      const caller = assertRole(c.get('principal'), 'client');
      const devices = await requireDevices(c.var.services).devices.list(caller);
      return c.json({ devices } as never, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/devices',
      summary: 'Admin: register a remote ADB tunnel (host:port must pass the tunnel allowlist)',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin', body: jsonBody(DEVICE_BODY_BYTES) }),
      request: { body: { content: { 'application/json': { schema: RegisterBody } }, required: true } },
      responses: {
        201: { description: 'registered', content: { 'application/json': { schema: Device } } },
        ...errorResponses(400, 401, 403, 409, 413, 415, 503),
      },
    }),
    async (c) => {
      const caller = assertRole(c.get('principal'), 'admin');
      const body = c.req.valid('json');
      const device = await requireDevices(c.var.services).devices.register(caller, {
        endpoint: body.endpoint,
        // Raw labels: the registry validates them and keeps every key (zod's record output drops `__proto__`).
        ...(body.labels
          ? { labels: ((await c.req.json()) as { labels: Record<string, string> }).labels }
          : {}),
        ...(body.provider ? { provider: body.provider } : {}),
      });
      c.var.logger.info({ deviceId: device.id, state: device.state }, 'device registered');
      return c.json(device as never, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/devices/{id}',
      summary: 'Admin: forget a device (refused while it is leased unless ?force=true)',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin' }),
      request: {
        params: z.object({ id: DeviceIdParam }),
        query: z.object({ force: z.enum(['true', 'false']).optional() }),
      },
      responses: { 204: { description: 'removed' }, ...errorResponses(400, 401, 403, 404, 409, 503) },
    }),
    async (c) => {
      assertRole(c.get('principal'), 'admin');
      const { id } = c.req.valid('param');
      await requireDevices(c.var.services).devices.remove(id, {
        force: c.req.valid('query').force === 'true',
      });
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/devices/{id}/clear-quarantine',
      summary: 'Admin: put a quarantined device back into service',
      security: [{ bearer: [] }],
      middleware: guard({ access: 'admin' }),
      request: { params: z.object({ id: DeviceIdParam }) },
      responses: {
        200: { description: 'the device', content: { 'application/json': { schema: Device } } },
        ...errorResponses(400, 401, 403, 404, 503),
      },
    }),
    async (c) => {
      const caller = assertRole(c.get('principal'), 'admin');
      const device = await requireDevices(c.var.services).devices.clearQuarantine(
        caller,
        c.req.valid('param').id,
      );
      return c.json(device as never, 200);
    },
  );
}
