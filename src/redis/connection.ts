/**
 * The one way a store opens Redis: the URL is checked here (`redis://` or `rediss://`), the
 * connection is lazy (nothing is dialled until the first command, so building a store never
 * blocks or fails), and every `error` event is logged once per distinct failure with the URL
 * stripped of its credentials (`describeRedisUrl`) — ioredis would otherwise print unhandled error
 * events to stderr on every reconnect attempt.
 *
 * While Redis is unreachable a command fails fast instead of waiting out ioredis' 20 retries (about
 * 12 s): reconnect attempts at most 500 ms apart, queued commands failed after every second attempt,
 * and no command waits longer than `COMMAND_TIMEOUT_MS`. A command that fails because the connection
 * is down (not a Redis error reply) rejects with `BridgeError` UNAVAILABLE (retryable) naming Redis
 * and the role, so the HTTP edge answers 503 `retryable: true`, not 500 INTERNAL.
 *
 * Only `src/redis/` and the Redis stores import ioredis.
 */
import { Redis, type RedisOptions, ReplyError } from 'ioredis';
import { BridgeError, invalidArgument, isBridgeError } from '../errors.ts';
import { createLogger, type Logger } from '../observability/logger.ts';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** The longest a command may wait for an answer, queued while reconnecting included. */
export const COMMAND_TIMEOUT_MS = 5000;

/** Fail-fast defaults of every connection (a role's own options win). */
const FAIL_FAST: RedisOptions = {
  maxRetriesPerRequest: 1,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 500),
  connectTimeout: 2000,
  commandTimeout: COMMAND_TIMEOUT_MS,
};

/**
 * A failure of the connection (refused, closed, timed out, retries exhausted) as UNAVAILABLE
 * (retryable); Redis' own error replies (scripts, NOSCRIPT) and BridgeErrors pass unchanged.
 */
export function redisUnavailable(err: unknown, role: string, where: string): unknown {
  if (isBridgeError(err) || err instanceof ReplyError || !(err instanceof Error)) return err;
  return new BridgeError('UNAVAILABLE', `Redis (${role}) at ${where} is unavailable: ${err.message}`, {
    retryable: true,
    details: { dependency: 'redis', role },
    cause: err,
  });
}

type ExecReplies = Array<[Error | null, unknown]> | null;

/**
 * The connection with failures mapped by `redisUnavailable` on every promise a method returns
 * (commands, scripts, auto-pipelined commands) and in what a MULTI or pipeline's `exec()` answers.
 */
function mapFailures(client: Redis, role: string, where: string): Redis {
  const map = <T>(out: Promise<T>): Promise<T> => {
    const mapped = out.catch((err: unknown) => {
      throw redisUnavailable(err, role, where);
    });
    // A caller that uses the callback form never reads this promise.
    mapped.catch(() => undefined);
    return mapped;
  };
  return new Proxy(client, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function' || key === 'constructor') return value;
      return (...args: unknown[]) => {
        const out: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (out instanceof Promise) return map(out);
        if ((key === 'multi' || key === 'pipeline') && out !== null && typeof out === 'object') {
          const batch = out as { exec: (...a: unknown[]) => Promise<ExecReplies> };
          const exec = batch.exec.bind(batch);
          batch.exec = (...a: unknown[]) =>
            map(exec(...a)).then(
              (replies) =>
                replies?.map(([err, reply]) => [
                  err === null ? null : (redisUnavailable(err, role, where) as Error),
                  reply,
                ]) ?? null,
            );
        }
        return out;
      };
    },
  });
}

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). Default redis://127.0.0.1:6379. */
  url?: string | undefined;
  /** What the connection is for, in log lines (`leases`, `devices`, `nodes`). */
  role: string;
  /** Where connection errors go; default a pino logger on stderr. */
  logger?: Logger | undefined;
  /** ioredis options of this role (retries, auto-pipelining); `lazyConnect` is always on. */
  options?: RedisOptions;
}

/** Parse and check a Redis URL (`Config.redisUrl` has the same scheme rule). Throws INVALID_ARGUMENT. */
export function parseRedisUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument('Redis URL is not a URL', [
      { path: 'redisUrl', message: 'expected redis://host:port' },
    ]);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw invalidArgument('Redis URL must start with redis:// or rediss://', [
      { path: 'redisUrl', message: 'expected redis:// or rediss://' },
    ]);
  }
  // No host (`redis://`, `redis:///1`) means ioredis' default, 127.0.0.1 — accepted as before.
  return parsed;
}

/**
 * The URL safe to log: scheme, host, port and database; a user name or password becomes `***`.
 * Never throws (an unparsable URL is described as `[unparsable redis url]`).
 */
export function describeRedisUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '[unparsable redis url]';
  }
  const credentials = parsed.username !== '' || parsed.password !== '' ? '***@' : '';
  const port = parsed.port === '' ? '' : `:${parsed.port}`;
  const db = parsed.pathname === '/' ? '' : parsed.pathname;
  return `${parsed.protocol}//${credentials}${parsed.hostname}${port}${db}`;
}

let fallbackLogger: Logger | undefined;

function defaultLogger(): Logger {
  if (fallbackLogger === undefined) fallbackLogger = createLogger('info');
  return fallbackLogger;
}

/** Open (lazily) a connection for one store. */
export function openRedis(options: RedisConnectionOptions): Redis {
  const url = options.url ?? DEFAULT_REDIS_URL;
  parseRedisUrl(url);
  const where = describeRedisUrl(url);
  const raw = new Redis(url, { ...FAIL_FAST, ...options.options, lazyConnect: true });
  const client = mapFailures(raw, options.role, where);
  const logger = options.logger ?? defaultLogger();
  let last: string | undefined;
  client.on('error', (err: Error) => {
    // One line per distinct failure, not one per reconnect attempt; `ready` re-arms it.
    if (err.message === last) return;
    last = err.message;
    logger.warn({ redis: where, role: options.role, err: err.message }, 'redis connection error');
  });
  client.on('ready', () => {
    if (last !== undefined) logger.info({ redis: where, role: options.role }, 'redis connection restored');
    last = undefined;
  });
  return client;
}

/**
 * Close a connection this process opened: QUIT when it is up (pending replies arrive first),
 * a plain disconnect when it never connected or QUIT fails.
 */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'wait') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}
