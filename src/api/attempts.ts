/**
 * What a request tried (`attempts`), in answers and in error details alike: one shape, over the
 * transports the helpers define (src/helpers/attempt.ts).
 */
import { z } from '@hono/zod-openapi';
import { ATTEMPT_TRANSPORTS } from '../helpers/attempt.ts';

export const AttemptSchema = z
  .object({
    transport: z.enum(ATTEMPT_TRANSPORTS).openapi({
      description:
        'how the device was reached: a helper `session`, a `one-shot` run, or a glass companion (`glass-agent`, `glass-a11y`)',
    }),
    outcome: z.string().openapi({ description: '`ok` or the error code' }),
    ms: z.number(),
  })
  .openapi('Attempt');

/** The transports a helper answer is served by. */
export const ServedTransportSchema = z.enum(['session', 'one-shot']);

/** An attempt in a helper's answer: the same shape, served by a session or a one-shot run. */
export const ServedAttemptSchema = AttemptSchema.extend({ transport: ServedTransportSchema }).openapi(
  'ServedAttempt',
);

export type Attempt = z.infer<typeof AttemptSchema>;
export type ServedAttempt = z.infer<typeof ServedAttemptSchema>;
