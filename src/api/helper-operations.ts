/**
 * Contract of the lease-scoped helper operations: ensure, snapshot (normalized JSON or raw XML),
 * viewport and gestures. The snapshot tree mirrors `NormalizedSnapshot` of src/snapshot/normalize.ts.
 */
import { z } from '@hono/zod-openapi';
import { ServedAttemptSchema, ServedTransportSchema } from './attempts.ts';

/** Largest `deadlineMs` a request may ask for: a limit of the contract, the routes refuse more. */
export const MAX_DEADLINE_MS = 300_000;

export const TransportField = z.enum(['auto', 'session', 'one-shot']).default('auto');

export const DeadlineField = z
  .number()
  .int()
  .min(1)
  .max(MAX_DEADLINE_MS)
  .optional()
  .openapi({ description: 'the whole request, fallback included (default timeoutMs + 10000)' });

export const CaptureFields = {
  waitForIdleTimeoutMs: z.number().int().optional(),
  waitForIdleQuietMs: z.number().int().optional(),
  timeoutMs: z.number().int().optional(),
  maxDepth: z.number().int().optional(),
  maxNodes: z.number().int().optional(),
};

export { AttemptSchema, ServedAttemptSchema, ServedTransportSchema } from './attempts.ts';

// ---- ensure

export const EnsureBodySchema = z
  .object({ policy: z.enum(['missing-or-outdated', 'always', 'never']).optional() })
  .strict()
  .openapi('EnsureHelperRequest');

export const EnsureResultSchema = z
  .object({
    before: z.enum(['missing', 'outdated', 'current', 'mismatched']),
    action: z.enum(['installed', 'updated', 'reinstalled', 'none']),
    serial: z.string(),
    packageName: z.string(),
    versionCode: z.number().int(),
    sha256: z.string(),
    installedVersionCode: z.number().int().nullable().openapi({ description: 'before; null when missing' }),
    uninstalledFirst: z.boolean().openapi({ description: 'an incompatible signer was uninstalled first' }),
    roundTrips: z.number().int(),
    durationMs: z.number(),
  })
  .openapi('EnsureHelperResult');

// ---- snapshot

export const SnapshotBodySchema = z
  .object({
    format: z.enum(['json', 'xml']).default('json'),
    transport: TransportField,
    deadlineMs: DeadlineField,
    ...CaptureFields,
  })
  .strict()
  .openapi('SnapshotRequest');

export const BoundsSchema = z
  .object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() })
  .openapi('Bounds');

export const WindowInfoSchema = z
  .object({
    index: z.number().int(),
    rotation: z.number().int().nullable(),
    package: z.string(),
    displayId: z.number().int().optional(),
    type: z.number().int().optional(),
    layer: z.number().int().optional(),
    active: z.boolean().optional(),
    focused: z.boolean().optional(),
    bounds: BoundsSchema.optional(),
  })
  .openapi('WindowInfo');

const snapshotNodeFields = {
  ref: z.string().openapi({ description: '`e1`, `e2`, … in document order' }),
  type: z.string().openapi({ description: 'short class name' }),
  className: z.string(),
  text: z.string(),
  contentDesc: z.string(),
  resourceId: z.string(),
  package: z.string(),
  hint: z.string(),
  index: z.number().int(),
  bounds: BoundsSchema.nullable(),
  visible: z.boolean(),
  enabled: z.boolean(),
  clickable: z.boolean(),
  longClickable: z.boolean(),
  focusable: z.boolean(),
  focused: z.boolean(),
  scrollable: z.boolean(),
  checkable: z.boolean(),
  checked: z.boolean(),
  selected: z.boolean(),
  password: z.boolean(),
  canScrollForward: z.boolean().nullable(),
  canScrollBackward: z.boolean().nullable(),
  covered: z.boolean(),
  hittable: z.boolean(),
  window: WindowInfoSchema.nullable().openapi({ description: 'on window roots only' }),
};

/** One node of the normalized tree (its children recursively). */
export interface SnapshotNode extends z.infer<z.ZodObject<typeof snapshotNodeFields>> {
  children: SnapshotNode[];
}

export const SnapshotNodeSchema: z.ZodType<SnapshotNode> = z
  .object({
    ...snapshotNodeFields,
    get children() {
      return z.array(SnapshotNodeSchema);
    },
  })
  .openapi('SnapshotNode');

export const NormalizedSnapshotSchema = z
  .object({
    rotation: z.number().int().nullable(),
    windowCount: z.number().int(),
    nodeCount: z.number().int(),
    windows: z.array(SnapshotNodeSchema).openapi({ description: 'window roots' }),
  })
  .openapi('NormalizedSnapshot');

const snapshotServedFields = {
  transport: ServedTransportSchema,
  fallback: z.string().optional().openapi({ description: 'why `auto` fell back to one-shot' }),
  elapsedMs: z.number(),
  deadlineMs: z.number(),
  attempts: z.array(ServedAttemptSchema),
  helperElapsedMs: z.number().nullable(),
  waitForIdleTimeoutMs: z.number().nullable(),
  nodeCount: z.number().int().nullable(),
  truncated: z.boolean().nullable(),
  windowCount: z.number().int().nullable(),
  captureMode: z.string().nullable(),
};

export const SnapshotJsonResponseSchema = z
  .object({ ...snapshotServedFields, format: z.literal('json'), snapshot: NormalizedSnapshotSchema })
  .openapi('SnapshotJson');

export const SnapshotXmlResponseSchema = z
  .object({
    ...snapshotServedFields,
    format: z.literal('xml'),
    xml: z.string().openapi({ description: 'the raw uiautomator XML' }),
  })
  .openapi('SnapshotXml');

export const SnapshotResponseSchema = z
  .discriminatedUnion('format', [SnapshotJsonResponseSchema, SnapshotXmlResponseSchema])
  .openapi('SnapshotResponse');

// ---- viewport

export const ViewportQuerySchema = z.object({
  transport: TransportField.optional(),
  deadlineMs: z.coerce.number().int().min(1).max(MAX_DEADLINE_MS).optional(),
});

export const ViewportResponseSchema = z
  .object({
    transport: ServedTransportSchema,
    x: z.number(),
    y: z.number(),
    width: z.number(),
    height: z.number(),
    elapsedMs: z.number(),
    deadlineMs: z.number(),
    attempts: z.array(ServedAttemptSchema),
  })
  .openapi('Viewport');

// ---- gestures

const Point = z.object({ x: z.number(), y: z.number() }).openapi('Point');

export const GestureSpecSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('tap'), x: z.number(), y: z.number() }).strict(),
    z
      .object({
        kind: z.literal('long-press'),
        x: z.number(),
        y: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z
      .object({ kind: z.literal('swipe'), from: Point, to: Point, durationMs: z.number().int().optional() })
      .strict(),
    z
      .object({ kind: z.literal('drag'), from: Point, to: Point, durationMs: z.number().int().optional() })
      .strict(),
    z
      .object({
        kind: z.literal('pinch'),
        center: Point,
        startDistance: z.number(),
        endDistance: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z
      .object({
        kind: z.literal('rotate'),
        center: Point,
        radius: z.number(),
        startAngle: z.number(),
        endAngle: z.number(),
        durationMs: z.number().int().optional(),
      })
      .strict(),
    z
      .object({
        kind: z.literal('plan'),
        plan: z.unknown().openapi({ description: 'a raw android-touch-plan-v1 plan' }),
      })
      .strict(),
  ])
  .openapi('GestureSpec');

export const GestureBodySchema = GestureSpecSchema.and(
  z.object({ transport: TransportField.optional(), deadlineMs: DeadlineField }),
).openapi('GestureRequest');

export const GestureResponseSchema = z
  .object({
    kind: z.string(),
    injectedEvents: z.number().int(),
    agentDeviceProtocol: z.string(),
    helperApiVersion: z.number().int().optional(),
    outputFormat: z.string().optional(),
    waitForIdleTimeoutMs: z.number().optional(),
    waitForIdleQuietMs: z.number().optional(),
    timeoutMs: z.number().optional(),
    maxDepth: z.number().optional(),
    maxNodes: z.number().optional(),
    rootPresent: z.boolean().optional(),
    captureMode: z.string().optional(),
    windowCount: z.number().optional(),
    nodeCount: z.number().optional(),
    truncated: z.boolean().optional(),
    requestId: z.string().optional().openapi({ description: "the helper's request id (session transport)" }),
    extra: z
      .record(z.string(), z.string())
      .optional()
      .openapi({ description: 'result fields this bridge does not know, verbatim' }),
    transport: ServedTransportSchema,
    elapsedMs: z.number(),
    deadlineMs: z.number(),
    attempts: z.array(ServedAttemptSchema),
    helperElapsedMs: z.number().nullable(),
  })
  .openapi('GestureResult');

export type EnsureHelperRequest = z.input<typeof EnsureBodySchema>;
export type EnsureHelperResult = z.infer<typeof EnsureResultSchema>;
export type SnapshotRequest = z.input<typeof SnapshotBodySchema>;
export type Bounds = z.infer<typeof BoundsSchema>;
export type WindowInfo = z.infer<typeof WindowInfoSchema>;
export type NormalizedSnapshot = z.infer<typeof NormalizedSnapshotSchema>;
export type SnapshotJsonResponse = z.infer<typeof SnapshotJsonResponseSchema>;
export type SnapshotXmlResponse = z.infer<typeof SnapshotXmlResponseSchema>;
export type SnapshotResponse = z.infer<typeof SnapshotResponseSchema>;
export type ViewportQuery = z.input<typeof ViewportQuerySchema>;
export type ViewportResponse = z.infer<typeof ViewportResponseSchema>;
export type GestureSpec = z.infer<typeof GestureSpecSchema>;
export type GestureRequest = z.input<typeof GestureBodySchema>;
export type GestureResponse = z.infer<typeof GestureResponseSchema>;
export type { Attempt, ServedAttempt } from './attempts.ts';
export type Transport = z.infer<typeof TransportField>;

// ---- screenshot

export const PNG_MEDIA_TYPE = 'image/png';

export const ScreenshotQuerySchema = z.object({
  deadlineMs: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_DEADLINE_MS)
    .optional()
    .openapi({ description: 'the whole capture (default 20000)' }),
});
