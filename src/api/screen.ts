/**
 * Contract of the live screen (`GET /v1/leases/{id}/screen`, a WebSocket; docs/live-screen.md): the
 * query the viewer that starts the device stream sets, and the viewer's input messages, checked at
 * the edge like the glass routes' bodies (text is well-formed Unicode of bounded size, a key one the
 * glass agent knows).
 */
import { z } from '@hono/zod-openapi';
import { GlassTextField, KeysBodySchema } from './glass.ts';

export const ScreenQuerySchema = z
  .object({
    maxSize: z.coerce
      .number()
      .int()
      .min(64)
      .max(4096)
      .optional()
      .openapi({ description: 'the longer side of the picture at most this many pixels (default 1280)' }),
    bitRate: z.coerce
      .number()
      .int()
      .min(100_000)
      .max(50_000_000)
      .optional()
      .openapi({ description: 'bits per second (default 4000000)' }),
    maxFps: z.coerce
      .number()
      .int()
      .min(1)
      .max(120)
      .optional()
      .openapi({ description: 'frames per second at most (default 30)' }),
  })
  .strict();

/** Picture coordinates: 0 ≤ x < width of the current `start` message (checked against it). */
const pictureCoordinate = z.number().finite().min(0).max(100_000);

export const ScreenInputSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('pointer'),
      action: z.enum(['down', 'move', 'up', 'cancel']),
      x: pictureCoordinate,
      y: pictureCoordinate,
    })
    .strict(),
  z.object({ type: z.literal('key'), key: KeysBodySchema.shape.chord }).strict(),
  z.object({ type: z.literal('text'), text: GlassTextField }).strict(),
]);

export type ScreenQuery = z.infer<typeof ScreenQuerySchema>;
export type ScreenInput = z.infer<typeof ScreenInputSchema>;

/** The largest text message a viewer may send (a text input of the glass limit, JSON-escaped). */
export const MAX_SCREEN_INPUT_BYTES = 512 * 1024;
