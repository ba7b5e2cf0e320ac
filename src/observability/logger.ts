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

const LEVEL_METHODS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);
const ignore = () => undefined;

/**
 * `parent.child(bindings)`, made only when it is first needed: a log call at an enabled level, or any
 * other use of the logger. A `child` of a logger not made yet is another lazy one with the bindings
 * merged (the later ones win). The per-request loggers (request id, then lease and device) cost one
 * pino child per request that logs, and none on a node whose level drops everything.
 */
export function lazyChild(parent: Logger, bindings: pino.Bindings): Logger {
  let made: Logger | undefined;
  const make = (): Logger => {
    made ??= parent.child(bindings);
    return made;
  };
  return new Proxy({} as Logger, {
    get(_target, prop) {
      if (made === undefined && typeof prop === 'string') {
        if (prop === 'child') {
          return (more: pino.Bindings, options?: pino.ChildLoggerOptions) =>
            options === undefined ? lazyChild(parent, { ...bindings, ...more }) : make().child(more, options);
        }
        if (LEVEL_METHODS.has(prop) && !parent.isLevelEnabled(prop)) return ignore;
      }
      const logger = make();
      const value: unknown = Reflect.get(logger, prop, logger);
      return typeof value === 'function' ? value.bind(logger) : value;
    },
    set(_target, prop, value) {
      return Reflect.set(make(), prop, value);
    },
    has(_target, prop) {
      return prop in make();
    },
  });
}
