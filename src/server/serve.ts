/**
 * The HTTP service on a real socket: where to bind (and whether that is allowed), Node's server
 * limits, listening and graceful close. What runs behind it is built by the composition root
 * (`src/node/`).
 */
import { lookup } from 'node:dns/promises';
import { Server as HttpServer } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import { serve as nodeServe, type ServerType } from '@hono/node-server';
import { type Config, ConfigError, isLoopbackHost } from '../config.ts';
import { BridgeError, isBridgeError } from '../errors.ts';
import { isTrustedProxy } from './client-address.ts';
import { limitConnectionsPerAddress } from './connection-limit.ts';
import { type UpgradeFetch, WebSocketHub } from './websocket.ts';

export type HostLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

const systemLookup: HostLookup = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolve the bind host before any decision is taken on it: a name is loopback only when every
 * address it resolves to is (`foo.localhost` may resolve anywhere, or nowhere). Resolves the
 * address to listen on; a name that does not resolve is a configuration error naming the variable.
 */
export async function resolveBindHost(
  host: string,
  resolve: HostLookup = systemLookup,
): Promise<{
  address: string;
  loopback: boolean;
}> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0) return { address: bare, loopback: isLoopbackHost(bare) };
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await resolve(bare);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new ConfigError('DEVICEBRIDGE_HOST', `cannot resolve ${JSON.stringify(host)} (${code})`);
  }
  if (addresses.length === 0) {
    throw new ConfigError('DEVICEBRIDGE_HOST', `cannot resolve ${JSON.stringify(host)} (no addresses)`);
  }
  return {
    address: addresses[0]!.address,
    loopback: addresses.every((a) => isIP(a.address) !== 0 && isLoopbackHost(a.address)),
  };
}

/** Refuse a non-loopback bind when no tokens are configured: anonymous admin must stay local. */
export function assertBindAllowed(host: string, loopback: boolean, tokensEnabled: boolean): void {
  if (!tokensEnabled && !loopback) {
    throw new ConfigError(
      'DEVICEBRIDGE_HOST',
      `refusing to bind ${host} without tokens (it is not loopback): set DEVICEBRIDGE_TOKENS_FILE or bind 127.0.0.1`,
    );
  }
}

/**
 * Node's HTTP server limits: the whole request (a slow body too) must arrive within the request
 * timeout (Node's default is 300 s), headers within the headers timeout; the timeouts are checked
 * every second (Node's default is every 30 s), and header blocks are capped at 16 KiB.
 */
export function serverOptions(config: Config) {
  return {
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: config.headersTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    maxHeaderSize: 16 * 1024,
  };
}

/**
 * A device side refused at start (a devices file or simulated devices that fail validation or the
 * tunnel allowlist) is the operator's input being refused: fatal, unlike a missing adb.
 */
export function isRefusedStart(err: unknown): boolean {
  return isBridgeError(err) && (err.code === 'INVALID_ARGUMENT' || err.code === 'PERMISSION_DENIED');
}

export interface Listening {
  url: string;
  port: number;
  /**
   * Stop accepting and close idle connections; resolves once in-flight requests are answered, or
   * after `graceMs` (default: no limit) when the connections still open are cut.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Listen on `address` (the resolved bind host) and the configured port; UNAVAILABLE when that fails.
 * `upgrades`: WebSocket upgrade requests go through it (`websocket.ts`; without it they are refused).
 */
export async function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  config: Config,
  address: string,
  upgrades?: UpgradeFetch,
): Promise<Listening> {
  let server: ServerType;
  const hub = upgrades === undefined ? undefined : new WebSocketHub(upgrades);
  try {
    server = await new Promise((resolve, reject) => {
      const s = nodeServe(
        { fetch, hostname: address, port: config.port, serverOptions: serverOptions(config) },
        () => resolve(s),
      );
      s.maxConnections = config.maxConnections;
      if (hub !== undefined) s.on('upgrade', (req, socket, head) => hub.handle(req, socket, head));
      if (config.maxConnectionsPerAddress > 0) {
        limitConnectionsPerAddress(s, config.maxConnectionsPerAddress, (address) =>
          isTrustedProxy(address, config.trustedProxies),
        );
      }
      s.once('error', reject);
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new BridgeError('UNAVAILABLE', `cannot listen on ${config.host}:${config.port}: ${code}`, {
      retryable: code === 'EADDRINUSE',
    });
  }
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${host}:${bound.port}`,
    port: bound.port,
    close: async (graceMs?: number) => {
      // Open WebSockets would hold the server open: each is told the server is going away.
      const sockets = hub?.close();
      await new Promise<void>((resolve) => {
        // An HTTP/1 server (no HTTP/2 options are given): its connections can be closed from here.
        const http = server instanceof HttpServer ? server : undefined;
        const cut =
          graceMs === undefined ? undefined : setTimeout(() => http?.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        // Idle keep-alive sockets would hold close() open; in-flight requests finish first.
        http?.closeIdleConnections();
      });
      await sockets;
    },
  };
}
