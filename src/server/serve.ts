/** Start the HTTP service on a real socket, with graceful shutdown. */
import { lookup } from 'node:dns/promises';
import { type AddressInfo, isIP } from 'node:net';
import { serve as nodeServe, type ServerType } from '@hono/node-server';
import { type Config, ConfigError, isLoopbackHost } from '../config.ts';
import { BridgeError, isBridgeError } from '../errors.ts';
import { createApp } from './app.ts';
import type { Services } from './env.ts';
import { attachDeviceNode, type DeviceNode, startDeviceNode } from './node.ts';
import { assertApkUrlsValid, publicBaseUrl } from './public-url.ts';
import { buildServices } from './services.ts';

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  /** The device side (absent when disabled or unavailable). */
  node?: DeviceNode;
  /** Why the device side is unavailable, when it failed to start. */
  deviceError?: string;
  close(): Promise<void>;
}

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

export async function startServer(config: Config, overrides: Partial<Services> = {}): Promise<RunningServer> {
  const bind = await resolveBindHost(config.host);
  const services = buildServices(config, overrides);
  try {
    assertBindAllowed(config.host, bind.loopback, services.auth.enabled);
    assertApkUrlsValid(config);
  } catch (err) {
    await services.store.close().catch(() => undefined);
    throw err;
  }
  let node: DeviceNode | undefined;
  let deviceError: string | undefined;
  if (config.devices && services.devices === undefined) {
    try {
      node = await startDeviceNode({ config, logger: services.logger, metrics: services.metrics, services });
      attachDeviceNode(services, node);
    } catch (err) {
      // startDeviceNode has stopped everything it started. Manifests and artifacts still work
      // without adb, and the device routes answer UNAVAILABLE; but a refused devices file or
      // refused simulated devices, and any failure under an explicit `--simulate N`, are fatal.
      if (config.simulate > 0 || isRefusedStart(err)) {
        await services.store.close().catch(() => undefined);
        throw err;
      }
      deviceError = (err as Error).message;
      services.logger.error({ err: deviceError }, 'device side unavailable');
    }
  }
  const app = createApp(services);
  let server: ServerType;
  try {
    server = await new Promise((resolve, reject) => {
      const s = nodeServe(
        {
          fetch: app.fetch,
          hostname: bind.address,
          port: config.port,
          serverOptions: serverOptions(config),
        },
        () => resolve(s),
      );
      (s as { maxConnections?: number }).maxConnections = config.maxConnections;
      s.once('error', reject);
    });
  } catch (err) {
    await node?.close().catch(() => undefined);
    await services.store.close().catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new BridgeError('UNAVAILABLE', `cannot listen on ${config.host}:${config.port}: ${code}`, {
      retryable: code === 'EADDRINUSE',
    });
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  // apkUrls and other nodes use the configured URL, else the loopback address we listen on.
  services.publicUrl = overrides.publicUrl ?? publicBaseUrl(config, address.port) ?? url;
  await node?.announce(services.publicUrl);
  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    services,
    ...(node ? { node } : {}),
    ...(deviceError ? { deviceError } : {}),
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Idle keep-alive sockets would hold close() open; in-flight requests finish first.
          (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        });
        await node?.close();
        await services.store.close();
      })();
      return closing;
    },
  };
}
