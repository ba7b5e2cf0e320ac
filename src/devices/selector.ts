/**
 * The device selector (`POST /v1/leases {selector}`, the lease manager, the device registry's
 * `match`): ONE zod schema (the route documents it, the manager and the registry validate with it)
 * and a validator whose errors name the field. Names follow the device rules of `labels.ts`. Pure.
 * (It keeps the API's name, a lease's selector; the lease queue's key is `leases/queue-key.ts`.)
 */
import { z } from 'zod';
import { type FieldError, invalidArgument } from '../errors.ts';
import { DeviceIdSchema, LABEL_PATTERN, MAX_LABELS } from './labels.ts';

/** Which devices a lease (or a registry match) may take: all given conditions hold. */
export interface LeaseSelector {
  deviceId?: string;
  labels?: Record<string, string>;
  sdkMin?: number;
  sdkMax?: number;
}

export const MIN_SDK = 1;
export const MAX_SDK = 100;

const sdk = z
  .number()
  .int('must be an integer')
  .min(MIN_SDK, `must be ≥ ${MIN_SDK}`)
  .max(MAX_SDK, `must be ≤ ${MAX_SDK}`);

export const LeaseSelectorSchema = z
  .strictObject({
    deviceId: DeviceIdSchema.optional(),
    labels: z
      .record(
        z.string().regex(LABEL_PATTERN, 'label key must match [A-Za-z0-9._/-]{1,63}'),
        z.string().regex(LABEL_PATTERN, 'label value must match [A-Za-z0-9._/-]{1,63}'),
      )
      .refine((labels) => Object.keys(labels).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`)
      .optional(),
    sdkMin: sdk.optional(),
    sdkMax: sdk.optional(),
  })
  .refine((s) => s.sdkMin === undefined || s.sdkMax === undefined || s.sdkMin <= s.sdkMax, {
    message: 'sdkMin must be ≤ sdkMax',
    path: ['sdkMin'],
  });

/**
 * Parse outside input into a selector. Throws BridgeError INVALID_ARGUMENT whose
 * `details.errors[].path` names the field (`selector.labels.team`, `selector.sdkMin`).
 */
export function validateSelector(input: unknown): LeaseSelector {
  const parsed = LeaseSelectorSchema.safeParse(input ?? {});
  if (parsed.success) {
    const out: LeaseSelector = {};
    const s = parsed.data;
    if (s.deviceId !== undefined) out.deviceId = s.deviceId;
    // From the validated input itself: zod's record drops a `__proto__` key (it assigns through the
    // setter), which would silently widen the selector. Own data properties keep every key.
    if (s.labels !== undefined) out.labels = ownLabels((input as { labels: Record<string, string> }).labels);
    if (s.sdkMin !== undefined) out.sdkMin = s.sdkMin;
    if (s.sdkMax !== undefined) out.sdkMax = s.sdkMax;
    return out;
  }
  const errors: FieldError[] = parsed.error.issues.map((issue) => ({
    path: ['selector', ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  const first = errors[0];
  throw invalidArgument(first ? `invalid ${first.path}: ${first.message}` : 'invalid selector', errors);
}

function ownLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels)) {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
