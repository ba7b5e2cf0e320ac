/**
 * Contract of the farm routes of a lease (issue 14): shell commands and the app under test. A
 * shell command is an argv array (each argument quoted by the bridge's one quoting function) or,
 * for a user who wants a shell, one command string.
 */
import { z } from '@hono/zod-openapi';

/** Bounds of one shell call. */
export const SHELL_LIMITS = {
  maxArgs: 256,
  maxArgBytes: 4096,
  maxCommandBytes: 16 * 1024,
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 10 * 60_000,
  defaultMaxOutputBytes: 1024 * 1024,
  maxOutputBytes: 8 * 1024 * 1024,
} as const;

export const ShellBodySchema = z
  .object({
    argv: z
      .array(z.string().max(SHELL_LIMITS.maxArgBytes))
      .min(1)
      .max(SHELL_LIMITS.maxArgs)
      .optional()
      .openapi({ description: 'the command and its arguments, each quoted by the bridge' }),
    command: z
      .string()
      .min(1)
      .max(SHELL_LIMITS.maxCommandBytes)
      .optional()
      .openapi({ description: 'one shell command line, run as given (instead of argv)' }),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(SHELL_LIMITS.maxTimeoutMs)
      .optional()
      .openapi({ description: `the deadline of the whole call (default ${SHELL_LIMITS.defaultTimeoutMs})` }),
    maxOutputBytes: z
      .number()
      .int()
      .min(1)
      .max(SHELL_LIMITS.maxOutputBytes)
      .optional()
      .openapi({
        description: `cap of stdout and of stderr each (default ${SHELL_LIMITS.defaultMaxOutputBytes}); beyond it the output is cut and \`truncated\` set`,
      }),
  })
  .strict()
  .refine((b) => (b.argv === undefined) !== (b.command === undefined), {
    message: 'give exactly one of argv (an array) or command (a string)',
    path: ['argv'],
  })
  .openapi('ShellRequest');

export const ShellResultSchema = z
  .object({
    exitCode: z.number().int().openapi({ description: 'the exit status (shell protocol v2), 0-255' }),
    stdout: z.string().openapi({ description: 'UTF-8 (invalid sequences replaced)' }),
    stderr: z.string(),
    truncated: z.boolean().openapi({ description: 'stdout or stderr exceeded maxOutputBytes and was cut' }),
    durationMs: z.number(),
  })
  .openapi('ShellResult');

export type ShellRequest = z.input<typeof ShellBodySchema>;
export type ShellResponse = z.infer<typeof ShellResultSchema>;
