/** Test helpers: a bridge app over a temp data directory, and token files. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ConsoleSessions } from '../../src/auth/console-sessions.ts';
import { Authenticator, hashToken } from '../../src/auth/tokens.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { createApp } from '../../src/server/app.ts';
import type { Services } from '../../src/server/env.ts';
import { buildServices } from '../../src/server/services.ts';

export const ADMIN_TOKEN = 'admin-secret-token-1';
export const CLIENT_TOKEN = 'client-secret-token-1';
export const OTHER_TENANT_TOKEN = 'client-secret-token-2';

/** A client token of tenant acme, and one of tenant globex, granted the `shell` capability. */
export const SHELL_TOKEN = 'client-shell-token-1';
export const OTHER_SHELL_TOKEN = 'client-shell-token-2';

/** A client token of tenant acme, and one of tenant globex, granted the `adb` capability. */
export const ADB_TOKEN = 'client-adb-token-1';
export const OTHER_ADB_TOKEN = 'client-adb-token-2';

/**
 * The test tokens; `withShell` adds SHELL_TOKEN (acme) and OTHER_SHELL_TOKEN (globex), `withAdb`
 * adds ADB_TOKEN (acme) and OTHER_ADB_TOKEN (globex).
 */
export function testTokens(options: { withShell?: boolean; withAdb?: boolean } = {}): Authenticator {
  return new Authenticator([
    { name: 'ops', tenant: 'acme', role: 'admin', sha256: hashToken(ADMIN_TOKEN) },
    { name: 'ci', tenant: 'acme', role: 'client', sha256: hashToken(CLIENT_TOKEN) },
    { name: 'other', tenant: 'globex', role: 'client', sha256: hashToken(OTHER_TENANT_TOKEN) },
    ...(options.withShell
      ? [
          {
            name: 'ci-shell',
            tenant: 'acme',
            role: 'client' as const,
            sha256: hashToken(SHELL_TOKEN),
            capabilities: ['shell' as const],
          },
          {
            name: 'other-shell',
            tenant: 'globex',
            role: 'client' as const,
            sha256: hashToken(OTHER_SHELL_TOKEN),
            capabilities: ['shell' as const],
          },
        ]
      : []),
    ...(options.withAdb
      ? [
          {
            name: 'ci-adb',
            tenant: 'acme',
            role: 'client' as const,
            sha256: hashToken(ADB_TOKEN),
            capabilities: ['adb' as const],
          },
          {
            name: 'other-adb',
            tenant: 'globex',
            role: 'client' as const,
            sha256: hashToken(OTHER_ADB_TOKEN),
            capabilities: ['adb' as const],
          },
        ]
      : []),
  ]);
}

export async function tempDir(
  prefix = 'devicebridge-test-',
): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A tokens file of the test tokens (`withShell`: SHELL_TOKEN too, with the shell capability). */
export async function writeTokensFile(dir: string, options: { withShell?: boolean } = {}): Promise<string> {
  const file = path.join(dir, 'tokens.json');
  await writeFile(
    file,
    JSON.stringify([
      { name: 'ops', tenant: 'acme', role: 'admin', sha256: hashToken(ADMIN_TOKEN) },
      { name: 'ci', tenant: 'acme', role: 'client', sha256: hashToken(CLIENT_TOKEN) },
      { name: 'other', tenant: 'globex', role: 'client', sha256: hashToken(OTHER_TENANT_TOKEN) },
      ...(options.withShell
        ? [
            {
              name: 'ci-shell',
              tenant: 'acme',
              role: 'client',
              sha256: hashToken(SHELL_TOKEN),
              capabilities: ['shell'],
            },
          ]
        : []),
    ]),
  );
  return file;
}

export interface TestBridge {
  config: Config;
  services: Services;
  app: ReturnType<typeof createApp>;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** One JSON answer of the app, with how long it took. */
export interface TimedAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
  body: Record<string, any>;
  ms: number;
}

/** `app.request` with an optional JSON body (and bearer token); the answer parsed and timed. */
export async function timedRequest(
  app: TestBridge['app'],
  method: string,
  path: string,
  body?: unknown,
  options: { token?: string } = {},
): Promise<TimedAnswer> {
  const started = performance.now();
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers['Authorization'] = `Bearer ${options.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await app.request(path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, ms: performance.now() - started };
}

/** An app over a fresh data dir; `auth` defaults to no tokens (loopback admin). */
export async function testBridge(
  options: { auth?: Authenticator; env?: Record<string, string>; consoleSessions?: ConsoleSessions } = {},
): Promise<TestBridge> {
  const { dir, cleanup } = await tempDir();
  const config = loadConfig({ DEVICEBRIDGE_DATA_DIR: dir, LOG_LEVEL: 'silent', ...options.env }, {});
  const services = buildServices(config, {
    logger: silentLogger(),
    metrics: createMetrics(),
    ...(options.auth ? { auth: options.auth } : { auth: new Authenticator([]) }),
  });
  if (options.consoleSessions !== undefined) services.consoleSessions = options.consoleSessions;
  const app = createApp(services);
  return {
    config,
    services,
    app,
    dataDir: dir,
    async cleanup() {
      await services.store.close();
      await cleanup();
    },
  };
}

export const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/apk');
export const fixture = (name: string): string => path.join(FIXTURES, name);

export interface DeviceBridge extends TestBridge {
  node: import('../../src/node/index.ts').DeviceNode & {
    /** The simulator behind the node's simulated devices (when it has any). */
    simulator?: import('../../src/simulator/index.ts').Simulator;
  };
}

/**
 * A bridge app with its device side: simulated devices through a real private adb server, the
 * snapshot-helper fixture published, leases in memory (or Redis when `redisPrefix` is given).
 */
export async function testDeviceBridge(
  options: {
    auth?: Authenticator;
    simulate?: number;
    redisPrefix?: string;
    env?: Record<string, string>;
    /** The process logger (default: silent). */
    logger?: import('../../src/observability/logger.ts').Logger;
    /** Stores to use instead of the configured ones (e.g. a counting wrapper). */
    stores?: {
      leaseStore: import('../../src/leases/types.ts').LeaseStore;
      deviceStore: import('../../src/devices/types.ts').DeviceStore;
    };
  } = {},
): Promise<DeviceBridge> {
  const { attachDeviceNode, startDeviceNode } = await import('../../src/node/index.ts');
  const { simulatedDevices } = await import('../../src/cli/simulated-devices.ts');
  const { publishRelease } = await import('../../src/releases/publish.ts');
  const { freePort } = await import('./device-bed.ts');
  const { dir, cleanup } = await tempDir();
  const env: Record<string, string> = {
    DEVICEBRIDGE_DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    DEVICEBRIDGE_SIMULATE: String(options.simulate ?? 2),
    DEVICEBRIDGE_ADB_PORT: String(await freePort()),
    DEVICEBRIDGE_HEALTH_INTERVAL_MS: '500',
    ...(options.redisPrefix
      ? { REDIS_URL: 'redis://127.0.0.1:6379', DEVICEBRIDGE_REDIS_PREFIX: options.redisPrefix }
      : {}),
    ...options.env,
  };
  const config = loadConfig(env, {});
  const services = buildServices(config, {
    logger: options.logger ?? silentLogger(),
    metrics: createMetrics(),
    auth: options.auth ?? new Authenticator([]),
  });
  await publishRelease(services.store, { apkPath: fixture('snapshot-helper-v2.apk'), version: '0.2.0' });
  const simulated = simulatedDevices(config.simulate);
  const started = await startDeviceNode({
    config,
    logger: services.logger,
    metrics: services.metrics,
    services,
    sources: [simulated],
    ...(options.stores ?? {}),
  });
  attachDeviceNode(services, started);
  const node: DeviceBridge['node'] = Object.assign(
    started,
    simulated.simulator ? { simulator: simulated.simulator } : {},
  );
  const app = createApp(services);
  return {
    config,
    services,
    app,
    node,
    dataDir: dir,
    async cleanup() {
      await node.close();
      await services.store.close();
      await cleanup();
    },
  };
}

/**
 * Serve a bridge app on a loopback port (for the CLI and other real HTTP clients); `server` is the
 * listening node:http server (its `upgrade` event, for WebSockets); `close` stops it.
 */
export async function listenApp(
  app: TestBridge['app'],
  options: { websockets?: boolean } = {},
): Promise<{ url: string; server: import('node:http').Server; close(): Promise<void> }> {
  const { serve } = await import('@hono/node-server');
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  let hub: import('../../src/server/websocket.ts').WebSocketHub | undefined;
  if (options.websockets === true) {
    // As `devicebridge serve` listens: upgrades (the live screen) through the same app.
    const { WebSocketHub } = await import('../../src/server/websocket.ts');
    const upgrades = new WebSocketHub(app.fetch);
    server.on('upgrade', (req, socket, head) => upgrades.handle(req, socket, head));
    hub = upgrades;
  }
  const { port } = server.address() as import('node:net').AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server: server as import('node:http').Server,
    // Upgraded sockets leave the HTTP server's count: the hub ends them (going-away) first.
    close: async () => {
      await hub?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Resolves after `n` `health-pass` events of a node's device registry (passes completed from now
 * on: at least `n - 1` of them started after the call) — what a check that "nothing happens" waits
 * for, instead of a guessed time.
 */
export function afterHealthPasses(
  registry: Pick<import('node:events').EventEmitter, 'on' | 'off'>,
  n: number,
): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const onPass = () => {
      seen += 1;
      if (seen < n) return;
      registry.off('health-pass', onPass);
      resolve();
    };
    registry.on('health-pass', onPass);
  });
}
