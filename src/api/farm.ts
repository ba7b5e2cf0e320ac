/**
 * Contract of the farm routes of a lease (issue 14): shell commands and the app under test. A
 * shell command is an argv array (each argument quoted by the bridge's one quoting function) or,
 * for a user who wants a shell, one command string.
 */
import { z } from '@hono/zod-openapi';
import { SHELL_EVENT_DATA_PATTERN } from './shell-event-data.ts';

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

/** The command of a shell call (argv or command line) and its deadline: one definition for both variants. */
const shellCommandFields = {
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
};

const oneCommand = {
  message: 'give exactly one of argv (an array) or command (a string)',
  path: ['argv'],
};

export const ShellBodySchema = z
  .object({
    ...shellCommandFields,
    maxOutputBytes: z
      .number()
      .int()
      .min(1)
      .max(SHELL_LIMITS.maxOutputBytes)
      .optional()
      .openapi({
        description: `cap of stdout and of stderr each (default ${SHELL_LIMITS.defaultMaxOutputBytes}); beyond it the output is cut, \`truncated\` set and the command stopped (\`exitCode\` null)`,
      }),
  })
  .strict()
  .refine((b) => (b.argv === undefined) !== (b.command === undefined), oneCommand)
  .openapi('ShellRequest');

/** The streaming variant: no output cap (the output is streamed as it comes, at the reader's pace). */
export const ShellStreamBodySchema = z
  .object(shellCommandFields)
  .strict()
  .refine((b) => (b.argv === undefined) !== (b.command === undefined), oneCommand)
  .openapi('ShellStreamRequest');

/** Newline-delimited JSON: the streamed answers (shell output, logcat), one JSON value per line. */
export const NDJSON_MEDIA_TYPE = 'application/x-ndjson';

/**
 * A response's content of NDJSON lines, each a `schema` value, for a route's `responses`. Keyed by a
 * `string` media type on purpose: @hono/zod-openapi types an `application/…json…` key as a JSON
 * answer, and one that is neither `json` nor `+json` (`x-ndjson`) as an answer no handler can give;
 * under a `string` key the route's answer is a `Response`, which a streamed body is.
 */
export function ndjsonContent<S extends z.ZodType>(schema: S): Record<string, { schema: S }> {
  return { [NDJSON_MEDIA_TYPE]: { schema } };
}

/** One NDJSON event of a streamed shell command: output chunks, then exactly one exit or error. */
export const ShellEventSchema = z
  .union([
    z
      .object({
        stream: z.enum(['stdout', 'stderr']),
        data: z.string().regex(SHELL_EVENT_DATA_PATTERN, 'must be padded base64').openapi({
          description: 'the chunk, base64 (byte-exact)',
        }),
      })
      .strict(),
    z
      .object({
        exit: z.number().int().min(0).max(255).openapi({ description: 'the exit status; the last event' }),
        durationMs: z.number().min(0),
      })
      .strict(),
    z
      .object({
        error: z
          .object({ code: z.string().min(1), message: z.string() })
          .strict()
          .openapi({ description: 'TIMEOUT, LEASE_EXPIRED or DEVICE_OFFLINE; the last event' }),
      })
      .strict(),
  ])
  .openapi('ShellEvent');

export type ShellStreamRequest = z.input<typeof ShellStreamBodySchema>;
export type ShellEventBody = z.infer<typeof ShellEventSchema>;

export const ShellResultSchema = z
  .object({
    exitCode: z.number().int().nullable().openapi({
      description:
        'the exit status (shell protocol v2), 0-255; null when the output passed maxOutputBytes: the bridge then stops the command there and its status is not known',
    }),
    stdout: z.string().openapi({ description: 'UTF-8 (invalid sequences replaced)' }),
    stderr: z.string(),
    truncated: z
      .boolean()
      .openapi({ description: 'stdout or stderr passed maxOutputBytes: cut there, and the command stopped' }),
    durationMs: z.number(),
  })
  .openapi('ShellResult');

export type ShellRequest = z.input<typeof ShellBodySchema>;
export type ShellResponse = z.infer<typeof ShellResultSchema>;

// ---- the app under test

const Sha256Field = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex characters')
  .openapi({ description: 'sha256 of an artifact published on this bridge' });

export const PackageNameParam = z
  .string()
  .min(1)
  .max(255)
  .openapi({ param: { name: 'package', in: 'path' }, example: 'com.example.app' });

export const AppActionParam = z
  .enum(['launch', 'stop', 'clear'])
  .openapi({ param: { name: 'action', in: 'path' } });

export const InstallAppJsonSchema = z
  .object({
    sha256: Sha256Field,
    installArgs: z
      .array(z.string())
      .optional()
      .openapi({ description: 'default ["install","-r","-t"]; `install` then only -r -t -d -g' }),
    keep: z.boolean().optional().openapi({ description: 'leave the app installed when the lease ends' }),
  })
  .strict()
  .openapi('InstallAppRequest');

export const InstallAppQuerySchema = z.object({
  installArgs: z
    .string()
    .max(64)
    .optional()
    .openapi({ description: 'for an uploaded APK: e.g. `install -r -t` (the allowlist applies)' }),
  keep: z.enum(['true', 'false']).optional().openapi({ description: 'for an uploaded APK' }),
});

export const LeaseAppSchema = z
  .object({
    packageName: z.string(),
    versionCode: z.number().int(),
    versionName: z.string().nullable(),
    sha256: z.string().nullable().openapi({ description: 'null for an app installed outside the API' }),
    installedAt: z.number().nullable().openapi({ description: 'null for an app installed outside the API' }),
    keep: z.boolean().openapi({ description: 'left installed at teardown' }),
    source: z.enum(['api', 'adb']).optional().openapi({
      description: "`api`: installed through this API; `adb`: found on the device (the lease's adb endpoint)",
    }),
  })
  .openapi('LeaseApp');

export const LeaseAppListSchema = z.object({ apps: z.array(LeaseAppSchema) }).openapi('LeaseAppList');

export const AppActionBodySchema = z
  .object({
    component: z
      .string()
      .max(512)
      .optional()
      .openapi({ description: 'launch: PKG/.Class (default: the launcher activity)' }),
  })
  .strict()
  .openapi('AppActionRequest');

export const AppActionResultSchema = z
  .object({
    packageName: z.string(),
    action: z.enum(['launch', 'stop', 'clear', 'uninstall']),
    component: z.string().nullable().openapi({ description: 'launch: the component started, when known' }),
  })
  .openapi('AppActionResult');

export type InstallAppRequest = z.input<typeof InstallAppJsonSchema>;
export type LeaseAppBody = z.infer<typeof LeaseAppSchema>;
export type LeaseAppList = z.infer<typeof LeaseAppListSchema>;
export type AppActionResult = z.infer<typeof AppActionResultSchema>;

// ---- logcat

export const LogcatQuerySchema = z.object({
  level: z
    .enum(['V', 'D', 'I', 'W', 'E', 'F'])
    .optional()
    .openapi({ description: 'the lowest level streamed (V D I W E F)' }),
  tag: z.string().min(1).max(128).optional().openapi({ description: 'only this tag' }),
  pid: z.coerce.number().int().min(0).max(4_194_304).optional().openapi({ description: 'only this process' }),
  since: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .openapi({ description: 'only entries at or after this time (ms since the epoch)' }),
});

export const LogEntrySchema = z
  .object({
    time: z.number().openapi({ description: 'ms since the epoch' }),
    pid: z.number().int(),
    tid: z.number().int(),
    level: z.enum(['V', 'D', 'I', 'W', 'E', 'F']),
    tag: z.string(),
    message: z.string(),
  })
  .openapi('LogEntry');

export type LogcatQuery = z.infer<typeof LogcatQuerySchema>;
export type LogEntryBody = z.infer<typeof LogEntrySchema>;
