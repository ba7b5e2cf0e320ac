import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { formatLogLine, type LogFormat, resolveLogFormat } from './log-format.ts';

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

/** A stream that writes each JSON log line it gets to `out` as a human line. */
export function prettyStream(out: { write(text: string): unknown }): pino.DestinationStream {
  let partial = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line !== '') out.write(`${formatLogLine(line)}\n`);
      done();
    },
  });
}

/**
 * The process logger: pino JSON on stderr, or human lines when `format` says so (`auto`: when stderr
 * is a terminal). Redaction applies before either format.
 */
export function createLogger(
  level = 'info',
  destination?: pino.DestinationStream,
  format: LogFormat = 'json',
): Logger {
  const pretty =
    destination === undefined && resolveLogFormat(format, process.stderr.isTTY === true) === 'pretty';
  return pino(
    { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'devicebridge' } },
    pretty ? prettyStream(process.stderr) : (destination ?? pino.destination(2)),
  );
}

/** A logger that discards everything, for tests and CLI commands that print their own output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
