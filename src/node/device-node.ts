/**
 * The device side of one bridge node, built once at start from configuration and its device
 * sources: the ADB runtime, the device registry, the lease manager (memory store by default, Redis
 * with REDIS_URL), the lease operations, and the application layer over them (`app`: the use cases
 * the routes and the CLI call). Dependencies are explicit and acyclic: the registry reads the lease
 * store; the operations check fences in the lease store and record helper status in the registry;
 * the manager matches and quarantines through the registry and tears down through the operations.
 */
import os from 'node:os';
import path from 'node:path';
import { AdbRuntime } from '../adb/runtime.ts';
import {
  DeviceService,
  type DeviceSide,
  FarmService,
  HelperService,
  LeaseScopes,
  LeaseService,
} from '../app/index.ts';
import { ArtifactCache } from '../artifacts/cache.ts';
import type { Config } from '../config.ts';
import { endpointPolicyFromEnv } from '../devices/endpoint-policy.ts';
import { MemoryNodeDirectory, NODE_STALE_MS, type NodeDirectory } from '../devices/nodes.ts';
import { openDeviceStores } from '../devices/open-store.ts';
import { DeviceRegistry } from '../devices/registry.ts';
import type { DeviceStore } from '../devices/types.ts';
import { LeaseOperations } from '../helpers/lease-operations.ts';
import { LeaseManager } from '../leases/manager.ts';
import { openLeaseStore } from '../leases/open-store.ts';
import type { LeaseStore } from '../leases/types.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Services } from '../server/env.ts';
import type { DeviceSource } from './device-source.ts';

export interface DeviceNode {
  /** This node's name (owner of the devices it drives). */
  name: string;
  /** Where every node answers, for handing lease-scoped calls to a device's owner. */
  nodes: NodeDirectory;
  /** Record this node's URL now and keep it fresh (a heartbeat) until close. */
  announce(url: string): Promise<void>;
  adb: AdbRuntime;
  devices: DeviceRegistry;
  leases: LeaseManager;
  operations: LeaseOperations;
  /** The use cases over this device side (what the routes and the CLI call). */
  app: DeviceSide;
  close(): Promise<void>;
}

export interface DeviceNodeOptions {
  config: Config;
  env?: Record<string, string | undefined>;
  logger: Logger;
  metrics: Metrics;
  services: Pick<Services, 'releases' | 'store'>;
  /** Override stores (tests). */
  leaseStore?: LeaseStore;
  deviceStore?: DeviceStore;
  /** Devices to register at start besides the devices file and adb discovery (e.g. the simulator). */
  sources?: DeviceSource[];
}

/** The stores the configuration asks for: memory without REDIS_URL, Redis (one factory) with it. */
async function stores(
  config: Config,
  logger: Logger,
): Promise<{ leaseStore: LeaseStore; deviceStore: DeviceStore; nodes: NodeDirectory }> {
  const redis = { redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, logger };
  const leaseStore = await openLeaseStore(redis);
  return { leaseStore, ...(await openDeviceStores(redis)) };
}

/** Hand the device side to the HTTP services (the routes find its use cases there). */
export function attachDeviceNode(services: Services, node: DeviceNode): void {
  services.deviceSide = node.app;
}

/**
 * What a start has set up so far, undone in reverse order: each start step registers its own
 * cleanup as soon as it succeeds, so a step that fails (a refused devices file, refused simulated
 * devices, an adb server that does not answer) stops everything started before it.
 */
class Teardown {
  readonly #steps: Array<{ what: string; run: () => Promise<void> | void }> = [];
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  add(what: string, run: () => Promise<void> | void): void {
    this.#steps.push({ what, run });
  }

  /** Register a step that runs after the adb side is down (simulated devices outlive their tunnels). */
  addAfterAdb(what: string, run: () => Promise<void> | void): void {
    const adb = this.#steps.findIndex((s) => s.what === 'adb');
    this.#steps.splice(adb === -1 ? this.#steps.length : adb, 0, { what, run });
  }

  async run(): Promise<void> {
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step.run();
      } catch (err) {
        this.#logger.warn({ err: (err as Error).message, step: step.what }, 'cleanup step failed');
      }
    }
  }
}

export async function startDeviceNode(options: DeviceNodeOptions): Promise<DeviceNode> {
  const teardown = new Teardown(options.logger);
  try {
    return await startSteps(options, teardown);
  } catch (err) {
    options.logger.error(
      { err: (err as Error).message },
      'device side failed to start; stopping what it started',
    );
    await teardown.run();
    throw err;
  }
}

async function startSteps(options: DeviceNodeOptions, teardown: Teardown): Promise<DeviceNode> {
  const { config, logger, metrics } = options;
  const node =
    config.nodeName ??
    `${os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 40)}-${process.pid}`;
  const built =
    options.leaseStore && options.deviceStore
      ? { leaseStore: options.leaseStore, deviceStore: options.deviceStore, nodes: new MemoryNodeDirectory() }
      : await stores(config, logger);
  teardown.add('lease store', () => built.leaseStore.close());
  teardown.add('device store', () => built.deviceStore.close());
  teardown.add('node directory', () => built.nodes.close());
  const adb = await AdbRuntime.start({
    port: config.adbPort,
    adbPath: config.adbPath,
    logger,
    ...(config.adbServer ? { external: config.adbServer } : {}),
  });
  teardown.add('adb', () => adb.close());
  adb.server.on('restarted', () => metrics.adbServerRestarts.inc());

  const devices = new DeviceRegistry({
    store: built.deviceStore,
    client: adb.client,
    tunnels: adb.tunnels,
    policy: endpointPolicyFromEnv({ DEVICEBRIDGE_TUNNEL_ALLOW: config.tunnelAllow, ...(options.env ?? {}) }),
    node,
    logger,
    healthIntervalMs: config.healthIntervalMs,
    leases: built.leaseStore,
  });
  const operations = new LeaseOperations({
    adb,
    releases: options.services.releases,
    store: options.services.store,
    cache: new ArtifactCache(path.join(config.dataDir, 'cache', 'apk')),
    fence: built.leaseStore,
    journal: built.leaseStore,
    helperStatus: devices,
    logger,
  });
  teardown.add('lease operations', () => operations.close());
  const leases = new LeaseManager({
    store: built.leaseStore,
    devices,
    teardown: operations,
    node,
    logger,
  });
  const scopes = new LeaseScopes({
    leases: built.leaseStore,
    devices: built.deviceStore,
    node,
    nodes: built.nodes,
  });
  const app: DeviceSide = {
    node,
    nodes: built.nodes,
    scopes,
    leases: new LeaseService({ scopes, manager: leases }),
    devices: new DeviceService({ registry: devices, leases: built.leaseStore }),
    helpers: new HelperService({ scopes, operations, metrics }),
    farm: new FarmService({ scopes, operations }),
  };

  if (config.devicesFile) await devices.loadConfigFile(config.devicesFile);
  await devices
    .discoverAdbDevices()
    .catch((err: Error) => logger.warn({ err: err.message }, 'adb device discovery failed'));

  for (const source of options.sources ?? []) {
    const started = await source.start({ known: (await devices.list()).length });
    if (started === null) continue;
    teardown.addAfterAdb(`${source.kind} devices`, () => started.close());
    for (const d of started.devices) {
      await devices.register({
        endpoint: d.endpoint,
        ...(d.labels === undefined ? {} : { labels: d.labels }),
        ...(d.provider === undefined ? {} : { provider: d.provider }),
        source: source.kind,
      });
    }
  }

  const refresh = async () => {
    const list = await devices.list();
    for (const state of ['online', 'offline', 'unauthorized', 'quarantined']) {
      metrics.devicesByState.set({ state }, list.filter((d) => d.state === state).length);
    }
    metrics.leasesActive.set(await leases.activeCount());
    metrics.leasesWaiting.set(await leases.waitingCount());
  };
  const gauges = setInterval(() => void refresh().catch(() => undefined), 5000);
  gauges.unref();
  teardown.add('gauges', () => clearInterval(gauges));
  await refresh().catch(() => undefined);
  devices.start();
  teardown.add('device registry', () => devices.stop());
  leases.start();
  teardown.add('lease manager', () => leases.stop());
  logger.info(
    { node, devices: (await devices.list()).length, store: config.redisUrl ? 'redis' : 'memory' },
    'device node started',
  );

  let heartbeat: NodeJS.Timeout | undefined;
  teardown.add('heartbeat', () => clearInterval(heartbeat));
  return {
    name: node,
    nodes: built.nodes,
    async announce(url: string) {
      const beat = () =>
        built.nodes
          .announce(node, url)
          .catch((err: Error) => logger.warn({ err: err.message }, 'node heartbeat failed'));
      await beat();
      clearInterval(heartbeat);
      heartbeat = setInterval(() => void beat(), NODE_STALE_MS / 3);
      heartbeat.unref();
    },
    adb,
    devices,
    leases,
    operations,
    app,
    close: () => teardown.run(),
  };
}
