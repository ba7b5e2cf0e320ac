import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Paths that must never reach a log line: bearer tokens, presigned URLs and anything that carries
 * credentials. pino replaces them with "[redacted]".
 */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'apkUrl',
  '*.apkUrl',
  'url',
  '*.url',
  'presignedUrl',
  '*.presignedUrl',
];

export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'devicebridge' } },
    destination ?? pino.destination(2),
  );
}

/** A logger that discards everything, for tests and CLI commands that print their own output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
