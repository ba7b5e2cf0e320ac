/** Contract of `GET /v1/whoami`: the caller as its token names it, and what the token may do. */
import { z } from '@hono/zod-openapi';
import { CAPABILITIES, CAPABILITY_MEANINGS } from '../auth/tokens.ts';

export const CapabilitySchema = z.enum(CAPABILITIES).openapi('Capability', {
  description: `A power an operator grants a client token on top of its role (admins hold every one): ${CAPABILITIES.map(
    (c) => `\`${c}\`: ${CAPABILITY_MEANINGS[c]}`,
  ).join('; ')}.`,
});

export const WhoamiSchema = z
  .object({
    name: z.string().openapi({ description: "the token's name in the tokens file" }),
    tenant: z.string(),
    role: z.enum(['admin', 'client']),
    capabilities: z.array(CapabilitySchema).openapi({
      description: 'what the token may do besides its role, in a fixed order; admins: every capability',
    }),
  })
  .openapi('Whoami');

export type Whoami = z.infer<typeof WhoamiSchema>;
