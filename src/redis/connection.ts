/**
 * The one way a store opens Redis: the URL is checked here (`redis://` or `rediss://`), the
 * connection is lazy (nothing is dialled until the first command, so building a store never
 * blocks or fails), and every `error` event is logged once per distinct failure with the URL
 * stripped of its credentials (`describeRedisUrl`) — ioredis would otherwise print unhandled error
 * events to stderr on every reconnect attempt.
 *
 * Only `src/redis/` and the Redis stores import ioredis.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { invalidArgument } from '../errors.ts';
import { createLogger, type Logger } from '../observability/logger.ts';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

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
  const client = new Redis(url, { ...options.options, lazyConnect: true });
  const logger = options.logger ?? defaultLogger();
  const where = describeRedisUrl(url);
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
