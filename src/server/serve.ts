/** Start the HTTP service on a real socket, with graceful shutdown. */
import type { AddressInfo } from 'node:net';
import { serve as nodeServe, type ServerType } from '@hono/node-server';
import { type Config, ConfigError, isLoopbackHost } from '../config.ts';
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

/** Refuse a non-loopback bind when no tokens are configured: anonymous admin must stay local. */
export function assertBindAllowed(config: Config, tokensEnabled: boolean): void {
  if (!tokensEnabled && !isLoopbackHost(config.host)) {
    throw new ConfigError(
      'DEVICEBRIDGE_HOST',
      `refusing to bind ${config.host} without tokens: set DEVICEBRIDGE_TOKENS_FILE or bind 127.0.0.1`,
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

export async function startServer(config: Config, overrides: Partial<Services> = {}): Promise<RunningServer> {
  const services = buildServices(config, overrides);
  assertBindAllowed(config, services.auth.enabled);
  assertApkUrlsValid(config);
  let node: DeviceNode | undefined;
  let deviceError: string | undefined;
  if (config.devices && services.devices === undefined) {
    try {
      node = await startDeviceNode({ config, logger: services.logger, metrics: services.metrics, services });
      attachDeviceNode(services, node);
    } catch (err) {
      // Manifests and artifacts still work without adb; the device routes answer UNAVAILABLE. Only
      // an explicit `--simulate N` makes a missing device side fatal.
      deviceError = (err as Error).message;
      services.logger.error({ err: deviceError }, 'device side unavailable');
      if (config.simulate > 0) throw err;
    }
  }
  const app = createApp(services);
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = nodeServe(
      {
        fetch: app.fetch,
        hostname: config.host,
        port: config.port,
        serverOptions: serverOptions(config),
      },
      () => resolve(s),
    );
    (s as { maxConnections?: number }).maxConnections = config.maxConnections;
    s.once('error', reject);
  });
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
