/**
 * The schemas of what the device stores keep, checked on every read (`decodeStored`): a device
 * record, a device's baseline, the store's generation and a node directory entry. They check the
 * shape readers rely on; objects keep fields they do not name, so a record a newer version wrote
 * reads back (and is written back by `update`) whole.
 */
import { z } from 'zod';
import { SETTINGS_TABLES } from './baseline.ts';

const text = z.string();
const time = z.number().finite();
const count = z.number().int().nonnegative();

export const StoredDeviceRecord = z.looseObject({
  id: text,
  serial: text,
  endpoint: text.optional(),
  provider: text.optional(),
  labels: z.record(z.string(), z.string()),
  state: z.enum(['online', 'offline', 'unauthorized', 'quarantined', 'ownerless']),
  quarantineReason: text.optional(),
  properties: z.looseObject({
    sdk: z.number().optional(),
    release: text.optional(),
    model: text.optional(),
    manufacturer: text.optional(),
    abi: text.optional(),
  }),
  helpers: z.record(
    z.string(),
    z.looseObject({ versionCode: z.number(), version: text.optional(), sha256: text, checkedAt: time }),
  ),
  source: z.enum(['adb', 'api', 'config', 'simulator']),
  baseline: z
    .looseObject({ capturedAt: time, packages: count, files: count, settings: count, processes: count })
    .optional(),
  ownerNode: text,
  consecutiveFailures: z.number(),
  createdAt: time,
  updatedAt: time,
});

export const StoredBaseline = z.looseObject({
  version: z.literal(1),
  capturedAt: time,
  packages: z.record(
    z.string(),
    z.looseObject({
      path: text,
      versionCode: z.number().nullable(),
      sha256: text.nullable().optional(),
    }),
  ),
  dirs: z.array(text),
  files: z.array(text),
  settings: z.object(
    Object.fromEntries(SETTINGS_TABLES.map((t) => [t, z.record(z.string(), z.string())])) as Record<
      (typeof SETTINGS_TABLES)[number],
      z.ZodRecord<z.ZodString, z.ZodString>
    >,
  ),
  processes: z.array(z.looseObject({ pid: z.number(), args: text, label: text.optional() })),
});

export const StoredGeneration = z.object({ id: text, since: z.number(), afterLoss: z.boolean() });

/** A node directory entry: `{"url"}`, the URL the node answers on, null before it listens. */
export const StoredNodeEntry = z.object({ url: text.nullable() });
