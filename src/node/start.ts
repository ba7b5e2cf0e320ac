/**
 * The composition root: build one bridge node from configuration and its device sources — the HTTP
 * services, the device side (with the application layer the routes call) and the listening socket —
 * and stop it again. The CLI passes the device sources in (`serve --simulate` the simulator).
 */

import { openConsoleSessions } from '../auth/console-sessions.ts';
import type { Config } from '../config.ts';
import type { OpenScreenSource } from '../lease-session/index.ts';
import { createApp } from '../server/app.ts';
import type { Services } from '../server/env.ts';
import { listenMetrics, type MetricsListener } from '../server/metrics-listener.ts';
import { assertApkUrlsValid, publicBaseUrl } from '../server/public-url.ts';
import { assertBindAllowed, isRefusedStart, listen, resolveBindHost } from '../server/serve.ts';
import { buildServices } from '../server/services.ts';
import { attachDeviceNode, type DeviceNode, startDeviceNode } from './device-node.ts';
import { DeviceSideRetry } from './device-side-retry.ts';
import type { DeviceSource } from './device-source.ts';

export interface RunningNode {
  url: string;
  port: number;
  services: Services;
  /**
   * The device side (undefined when disabled, or while it is unavailable: a start that failed is
   * tried again in the background until it succeeds; see device-side-retry.ts).
   */
  readonly node: DeviceNode | undefined;
  /** Why the device side is unavailable, while it is. */
  readonly deviceError: string | undefined;
  /** The unauthenticated metrics endpoint, when DEVICEBRIDGE_METRICS_PORT is set. */
  metricsUrl?: string;
  /**
   * Drain and stop (SIGTERM): not ready at once, new leases refused (UNAVAILABLE) and waits ended,
   * no new connections, each keep-alive connection closed after its current answer, calls in
   * flight given `drainGraceMs` to finish; then the device side stops (sessions closed in
   * parallel, the adb server stopped) and the stores close.
   */
  close(): Promise<void>;
}

export interface StartNodeOptions {
  /** Services to use instead of building them (tests). */
  overrides?: Partial<Services>;
  /** Devices to register at start besides the devices file and adb discovery. */
  sources?: DeviceSource[];
  /** Opens a lease device's live screen stream (absent: the live screen answers UNAVAILABLE). */
  openScreenSource?: OpenScreenSource;
}

export async function startNode(config: Config, options: StartNodeOptions = {}): Promise<RunningNode> {
  const overrides = options.overrides ?? {};
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
  let retry: DeviceSideRetry<DeviceNode> | undefined;
  // The URL other nodes reach this one at, once listening (a device side started later announces it).
  let nodeUrl: string | undefined;
  const startDevices = () =>
    startDeviceNode({
      config,
      logger: services.logger,
      metrics: services.metrics,
      services,
      sources: options.sources ?? [],
      ...(options.openScreenSource === undefined ? {} : { openScreenSource: options.openScreenSource }),
    });
  if (config.devices && services.deviceSide === undefined) {
    try {
      node = await startDevices();
      attachDeviceNode(services, node);
    } catch (err) {
      // startDeviceNode has stopped everything it started. Manifests and artifacts still work
      // without adb, and the device routes answer UNAVAILABLE while the device side is started
      // again in the background (its Redis or adb server may answer later); but a refused devices
      // file or refused simulated devices, and any failure under an explicit `--simulate N`, are fatal.
      if (config.simulate > 0 || isRefusedStart(err)) {
        await services.store.close().catch(() => undefined);
        throw err;
      }
      deviceError = (err as Error).message;
      // Not ready while the device side is down: a balancer sends its calls to a node that drives devices.
      services.readiness = {
        ...services.readiness,
        devices: () => Promise.reject(new Error(`device side unavailable: ${deviceError}`)),
      };
      retry = new DeviceSideRetry({
        start: startDevices,
        started: async (side) => {
          node = side;
          deviceError = undefined;
          const { devices: _, ...rest } = services.readiness ?? {};
          services.readiness = rest;
          attachDeviceNode(services, side);
          if (nodeUrl !== undefined) await side.announce(nodeUrl);
        },
        discard: (side) => side.close(),
        failed: (message) => {
          deviceError = message;
        },
        logger: services.logger,
      });
      services.logger.error(
        { err: deviceError, retryInMs: retry.nextDelayMs },
        'device side unavailable; starting it again',
      );
      retry.schedule();
    }
  }
  // Console sessions beside the leases (Redis when configured), so any node honours a session.
  if (services.consoleSessions === undefined && config.redisUrl !== undefined) {
    services.consoleSessions = await openConsoleSessions({
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      logger: services.logger,
    });
  }
  const app = createApp(services);
  let listening: Awaited<ReturnType<typeof listen>>;
  try {
    listening = await listen(app.fetch, config, bind.address, app.fetch);
  } catch (err) {
    await retry?.stop();
    await node?.close().catch(() => undefined);
    await services.store.close().catch(() => undefined);
    throw err;
  }
  let metricsListener: MetricsListener | undefined;
  if (config.metricsPort !== undefined) {
    try {
      metricsListener = await listenMetrics(services.metrics, config.metricsHost, config.metricsPort);
    } catch (err) {
      await listening.close(0);
      await retry?.stop();
      await node?.close().catch(() => undefined);
      await services.store.close().catch(() => undefined);
      throw err;
    }
  }
  // apkUrls use the configured URL, else the loopback address we listen on; other nodes forward to
  // DEVICEBRIDGE_NODE_URL when set (the fleet's private network), else the same URL.
  services.publicUrl = overrides.publicUrl ?? publicBaseUrl(config, listening.port) ?? listening.url;
  nodeUrl = config.nodeUrl ?? services.publicUrl;
  await node?.announce(nodeUrl);
  let closing: Promise<void> | undefined;
  return {
    url: listening.url,
    port: listening.port,
    services,
    get node() {
      return node;
    },
    get deviceError() {
      return deviceError;
    },
    ...(metricsListener ? { metricsUrl: metricsListener.url } : {}),
    close() {
      closing ??= (async () => {
        services.draining = true;
        // No device side starts any more (one starting now is stopped again).
        await retry?.stop();
        node?.drain();
        await Promise.all([
          listening.close(config.drainGraceMs),
          // MCP sessions live in this node's memory: they end now (their open streams too, which
          // would hold the drain), their leases released in process while the device side still runs.
          services.mcpSessions?.close().catch(() => undefined),
        ]);
        await metricsListener?.close();
        await node?.close();
        await services.consoleSessions?.close().catch(() => undefined);
        await services.store.close();
      })();
      return closing;
    },
  };
}
