/**
 * Contract of the doctor (`POST /v1/leases/{id}/doctor`): every capability of a leased device
 * checked in order, each passed, failed (with what to do for a known failure) or skipped (naming
 * the check it needed), and the device's identity, so that a user can send the report back.
 */
import { z } from '@hono/zod-openapi';

/** The checks, in the order they run. */
export const DOCTOR_CHECK_IDS = [
  'helpers-installed',
  'self-test-screen',
  'viewport',
  'snapshot-one-shot',
  'snapshot-session',
  'gesture',
  'glass-agent',
  'clipboard',
  'keys',
  'a11y-enable',
  'a11y-tree',
  'unicode-text',
  'set-text',
  'settings-restored',
] as const;
export type DoctorCheckId = (typeof DOCTOR_CHECK_IDS)[number];

/** How long a whole run may take by default, and at most (seconds). */
export const DOCTOR_DEFAULT_SECONDS = 120;
export const DOCTOR_MAX_SECONDS = 600;

export const DoctorBodySchema = z
  .object({
    timeoutSeconds: z
      .number()
      .int()
      .min(10)
      .max(DOCTOR_MAX_SECONDS)
      .optional()
      .openapi({
        description: `the whole run's bound (default ${DOCTOR_DEFAULT_SECONDS}); checks left when it runs out are skipped`,
      }),
  })
  .strict()
  .openapi('DoctorRequest');

export const DoctorCheckSchema = z
  .object({
    id: z.enum(DOCTOR_CHECK_IDS),
    title: z.string(),
    status: z.enum(['pass', 'fail', 'skip']),
    elapsedMs: z.number().min(0),
    detail: z.string().openapi({ description: 'what was seen; for a skip, the check it depended on' }),
    fix: z.string().optional().openapi({
      description: 'for a known failure: what to change on the device, then run the doctor again',
    }),
    known: z
      .enum(['test-install-refused', 'injection-blocked', 'a11y-restricted', 'screen-off', 'generic'])
      .optional()
      .openapi({ description: 'which known failure this is (generic: not a known one)' }),
    errorCode: z.string().optional().openapi({ description: 'the bridge error code of a failure' }),
  })
  .openapi('DoctorCheck');

export const DoctorDeviceSchema = z
  .object({
    model: z.string().nullable(),
    manufacturer: z.string().nullable(),
    sdk: z.number().int().nullable().openapi({ description: 'ro.build.version.sdk' }),
    release: z.string().nullable().openapi({ description: 'ro.build.version.release' }),
    fingerprint: z.string().nullable().openapi({ description: 'ro.build.fingerprint' }),
  })
  .openapi('DoctorDevice');

export const DoctorHelperSchema = z
  .object({
    name: z.string(),
    version: z
      .string()
      .nullable()
      .openapi({ description: 'the release the bridge offers; null: none published' }),
    sha256: z.string().nullable(),
  })
  .openapi('DoctorHelper');

export const DoctorReportSchema = z
  .object({
    ok: z.boolean().openapi({ description: 'no check failed' }),
    leaseId: z.string(),
    deviceId: z.string(),
    startedAt: z.string().openapi({ description: 'ISO 8601' }),
    elapsedMs: z.number().min(0),
    timeoutSeconds: z.number().int(),
    bridge: z.object({ version: z.string(), node: z.string() }),
    device: DoctorDeviceSchema,
    helpers: z.array(DoctorHelperSchema),
    summary: z.object({ pass: z.number().int(), fail: z.number().int(), skip: z.number().int() }),
    checks: z.array(DoctorCheckSchema),
    cleanup: z
      .object({ actions: z.array(z.string()), failures: z.array(z.string()) })
      .openapi({ description: 'what putting the device back did (companions stopped, settings restored)' }),
  })
  .openapi('DoctorReport');

export type DoctorRequest = z.input<typeof DoctorBodySchema>;
export type DoctorCheck = z.infer<typeof DoctorCheckSchema>;
export type DoctorDevice = z.infer<typeof DoctorDeviceSchema>;
export type DoctorReport = z.infer<typeof DoctorReportSchema>;
