/**
 * Contract of the lease-scoped glass companion operations (the glass contract): the clipboard, text input, key
 * chords and pointer gestures through the glass agent; the accessibility tree and `set_text` /
 * `click` on its nodes through the glass a11y service. Input is checked here, at the edge: text is
 * well-formed Unicode of bounded size, a chord one the agent knows (`parseKeyChord`), a gesture a
 * bounded list of points in time order, a ref `eN` or the raw integer.
 */
import { z } from '@hono/zod-openapi';
import type { ErrorCode } from '../errors.ts';
import { isJavaPackageName } from '../protocol/android/java-names.ts';
import { KeyChordError, parseKeyChord } from '../protocol/helper/key-chord.ts';
import { HELPER_ERRORS } from './errors.ts';

/** Largest text (clipboard, typed, set_text) in UTF-8 bytes. */
export const MAX_GLASS_TEXT_BYTES = 64 * 1024;
/** Pointer gestures: at most this many points, coordinates and times within these bounds. */
export const MAX_POINTER_POINTS = 1000;
export const MAX_POINTER_COORDINATE = 100_000;
export const MAX_POINTER_TIME_MS = 60_000;

/** A lone surrogate (half of a UTF-16 pair): it has no UTF-8 form and would reach the device as "?". */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const GlassTextField = z
  .string()
  .refine((s) => !LONE_SURROGATE.test(s), { message: 'must be well-formed Unicode (no lone surrogates)' })
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_GLASS_TEXT_BYTES, {
    message: `must be at most ${MAX_GLASS_TEXT_BYTES} bytes of UTF-8`,
  })
  .openapi({ description: `any Unicode text, up to ${MAX_GLASS_TEXT_BYTES} bytes of UTF-8` });

export const ClipboardSchema = z
  .object({ text: z.string().openapi({ description: "the device's clipboard text" }) })
  .openapi('Clipboard');

export const ClipboardSetBodySchema = z
  .object({ text: GlassTextField })
  .strict()
  .openapi('ClipboardSetRequest');

export const TextBodySchema = z
  .object({ text: GlassTextField.openapi({ description: 'typed into the focused field, faithfully' }) })
  .strict()
  .openapi('TextInputRequest');

export const KeysBodySchema = z
  .object({
    chord: z
      .string()
      .max(200)
      .superRefine((chord, ctx) => {
        try {
          parseKeyChord(chord);
        } catch (err) {
          if (!(err instanceof KeyChordError)) throw err;
          ctx.addIssue({ code: 'custom', message: err.message });
        }
      })
      .openapi({ description: '"+"-joined modifiers and one key: `ctrl+a`, `shift+tab`, `enter`, `f5`' }),
  })
  .strict()
  .openapi('KeyChordRequest');

const coordinate = z.number().min(-MAX_POINTER_COORDINATE).max(MAX_POINTER_COORDINATE);

export const PointerPointSchema = z
  .object({
    x: coordinate,
    y: coordinate,
    t_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_POINTER_TIME_MS)
      .openapi({ description: 'ms from the first point' }),
  })
  .strict()
  .openapi('PointerPoint');

export const PointerBodySchema = z
  .object({
    gesture: z
      .array(PointerPointSchema)
      .min(1)
      .max(MAX_POINTER_POINTS)
      .superRefine((points, ctx) => {
        points.forEach((p, i) => {
          const before = points[i - 1];
          if (before !== undefined && p.t_ms < before.t_ms) {
            ctx.addIssue({
              code: 'custom',
              path: [i, 't_ms'],
              message: 'must not be earlier than the point before',
            });
          }
        });
      }),
    button: z
      .number()
      .int()
      .min(0)
      .max(16)
      .optional()
      .openapi({ description: 'accepted and passed on (reserved by the agent)' }),
  })
  .strict()
  .openapi('PointerRequest');

export const GlassDoneSchema = z
  .object({ ok: z.literal(true), elapsedMs: z.number() })
  .openapi('GlassDone', { description: 'the companion did it' });

// ---- accessibility tree

export const A11yBoundsSchema = z
  .object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() })
  .openapi('A11yBounds');

const a11yNodeFields = {
  ref: z.string().openapi({ description: '`e1`, `e2`, … in pre-order (the snapshot scheme)' }),
  rawRef: z.number().int().openapi({ description: "the service's ref: the pre-order index from 0" }),
  type: z.string().openapi({ description: 'short class name' }),
  className: z.string(),
  text: z.string(),
  contentDesc: z.string(),
  bounds: A11yBoundsSchema,
  enabled: z.boolean(),
  clickable: z.boolean(),
  scrollable: z.boolean(),
  editable: z.boolean(),
};

/** One node of the normalized accessibility tree (its children recursively). */
export interface A11yNode extends z.infer<z.ZodObject<typeof a11yNodeFields>> {
  children: A11yNode[];
}

export const A11yNodeSchema: z.ZodType<A11yNode> = z
  .object({
    ...a11yNodeFields,
    get children() {
      return z.array(A11yNodeSchema);
    },
  })
  .openapi('A11yNode');

export const A11yTreeQuerySchema = z.object({
  format: z
    .enum(['normalized', 'raw'])
    .default('normalized')
    .openapi({
      param: { name: 'format', in: 'query' },
      description: '`normalized` (refs e1, e2, …) or `raw` (the service tree as sent)',
    }),
  package: z
    .string()
    .refine((s) => s === '' || isJavaPackageName(s), 'must be a Java package name (com.example.app)')
    .optional()
    .openapi({
      param: { name: 'package', in: 'query' },
      description: 'the package asked for; the service answers from the active window regardless',
    }),
});

const treeServedFields = {
  package: z.string().nullable().openapi({
    description:
      'the window the service answered from; null when it cannot be named (actions are then refused)',
  }),
  elapsedMs: z.number(),
};

export const A11yTreeNormalizedSchema = z
  .object({
    format: z.literal('normalized'),
    ...treeServedFields,
    nodeCount: z.number().int(),
    root: A11yNodeSchema,
  })
  .openapi('A11yTreeNormalized');

export const A11yTreeRawSchema = z
  .object({
    format: z.literal('raw'),
    ...treeServedFields,
    tree: z.record(z.string(), z.unknown()).openapi({ description: "the service's tree as sent (the glass contract)" }),
  })
  .openapi('A11yTreeRaw');

export const A11yTreeResponseSchema = z
  .discriminatedUnion('format', [A11yTreeNormalizedSchema, A11yTreeRawSchema])
  .openapi('A11yTree');

export const A11yClickViaSchema = z.enum(['tap', 'accessibility']).openapi({
  description:
    "click only: how the node is clicked. `tap` (the default): a tap at the centre of the node's bounds on screen (clipped to the window the tree came from; a node with no part on screen is refused, INVALID_ARGUMENT), through the snapshot helper's gesture. `accessibility`: the a11y service's ACTION_CLICK, which answers success and does nothing on Jetpack Compose.",
});

export const A11yActionBodySchema = z
  .object({
    ref: z
      .union([z.string().max(16), z.number().int().min(0)])
      .openapi({ description: '`e4` from the normalized tree, or the raw integer (3) from the raw tree' }),
    action: z.enum(['set_text', 'click']),
    text: GlassTextField.optional().openapi({ description: 'set_text only: the new text' }),
    via: A11yClickViaSchema.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.action === 'set_text' && body.text === undefined) {
      ctx.addIssue({ code: 'custom', path: ['text'], message: 'is required for set_text' });
    }
    if (body.action === 'click' && body.text !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['text'], message: 'is only for set_text' });
    }
    if (body.action !== 'click' && body.via !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['via'], message: 'is only for click' });
    }
  })
  .openapi('A11yActionRequest');

export const A11yActionResponseSchema = z
  .object({
    ok: z.literal(true),
    ref: z.string(),
    rawRef: z.number().int(),
    action: z.enum(['set_text', 'click']),
    via: z
      .enum(['tap', 'accessibility'])
      .optional()
      .openapi({ description: 'click only: how the node was clicked' }),
    point: z
      .object({ x: z.number().int(), y: z.number().int() })
      .optional()
      .openapi({ description: 'a click by tap: where the tap landed (screen pixels)' }),
    elapsedMs: z.number(),
  })
  .openapi('A11yActionResult');

export type Clipboard = z.infer<typeof ClipboardSchema>;
export type ClipboardSetRequest = z.input<typeof ClipboardSetBodySchema>;
export type TextInputRequest = z.input<typeof TextBodySchema>;
export type KeyChordRequest = z.input<typeof KeysBodySchema>;
export type PointerPoint = z.infer<typeof PointerPointSchema>;
export type PointerRequest = z.input<typeof PointerBodySchema>;
export type GlassDone = z.infer<typeof GlassDoneSchema>;
export type A11yTreeQuery = z.input<typeof A11yTreeQuerySchema>;
export type A11yTreeNormalized = z.infer<typeof A11yTreeNormalizedSchema>;
export type A11yTreeRaw = z.infer<typeof A11yTreeRawSchema>;
export type A11yTree = z.infer<typeof A11yTreeResponseSchema>;
export type A11yActionRequest = z.input<typeof A11yActionBodySchema>;
export type A11yActionResult = z.infer<typeof A11yActionResponseSchema>;
export type A11yClickVia = z.infer<typeof A11yClickViaSchema>;

/** The error codes a glass operation can answer beyond a lease route's: a helper's, and the seed's. */
export const GLASS_ERRORS = [
  ...HELPER_ERRORS,
  'COMPANION_REFUSED',
  'COMPANION_UNSUPPORTED',
] as const satisfies readonly ErrorCode[];
