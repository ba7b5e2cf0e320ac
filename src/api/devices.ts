/** Contract of the device routes. */
import { z } from '@hono/zod-openapi';
import { DeviceIdSchema } from '../devices/labels.ts';

/** The one device id rule (devices/labels.ts), as the path parameter. */
export const DeviceIdParam = DeviceIdSchema.meta({
  param: { name: 'id', in: 'path' },
  example: '127.0.0.1-5555',
});

export const DeviceSchema = z
  .object({
    id: z.string(),
    serial: z.string(),
    endpoint: z.string().optional(),
    provider: z.string().optional(),
    labels: z.record(z.string(), z.string()),
    state: z.enum(['online', 'offline', 'unauthorized', 'quarantined', 'ownerless']),
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
      z.object({
        versionCode: z.number(),
        version: z.string().optional().openapi({
          description: 'semver of the installed release (absent in records written before it was kept)',
        }),
        sha256: z.string(),
        checkedAt: z.number(),
      }),
    ),
    source: z.enum(['adb', 'api', 'config', 'simulator']),
    baseline: z
      .object({
        capturedAt: z.number(),
        packages: z.number().int(),
        files: z.number().int(),
        settings: z.number().int(),
        processes: z.number().int(),
      })
      .optional()
      .openapi({
        description:
          'what the reset between tenants restores the device to (counts; when it was recorded); absent until recorded, and a device without one is not leased',
      }),
    ownerNode: z.string(),
    leaseId: z
      .string()
      .nullable()
      .openapi({ description: 'the active lease, shown to its tenant and admins only' }),
    leased: z.boolean(),
  })
  .openapi('Device');

export const DeviceListSchema = z.object({ devices: z.array(DeviceSchema) }).openapi('DeviceList');

export const RegisterDeviceBodySchema = z
  .object({
    endpoint: z.string().min(3).max(300).openapi({ example: '127.0.0.1:5555' }),
    labels: z.record(z.string(), z.string()).optional(),
    provider: z.string().max(64).optional(),
  })
  .strict()
  .openapi('RegisterDevice');

export const RemoveDeviceQuerySchema = z.object({ force: z.enum(['true', 'false']).optional() });

export type Device = z.infer<typeof DeviceSchema>;
export type DeviceList = z.infer<typeof DeviceListSchema>;
export type RegisterDeviceRequest = z.input<typeof RegisterDeviceBodySchema>;
