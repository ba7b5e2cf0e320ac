/**
 * The device side of one bridge node, built once at start from configuration and its device
 * sources: the ADB runtime, the device registry, the lease manager (memory store by default, Redis
 * with REDIS_URL), the lease-session room, and the application layer over them (`app`: the use cases
 * the routes and the CLI call). Dependencies are explicit and acyclic: the registry reads the lease
 * store; the room checks fences in the lease store and record helper status in the registry;
 * the manager matches and quarantines through the registry and tears down through the room.
 *
 * In a fleet (Redis): the node's name is configured or persisted in its data dir (`node-identity.ts`);
 * it is alive in the node directory from the first step (a heartbeat with a TTL of 3 beats) and
 * leaves it on close, removing its simulated devices' records, so no ghost stays behind.
 */
import path from 'node:path';
import { AdbRelayEndpoints } from '../adb/relay-endpoints.ts';
import { AdbRuntime } from '../adb/runtime.ts';
import { pingAdbServer } from '../adb/server.ts';
import {
  DeviceService,
  type DeviceSide,
  DoctorService,
  GlassService,
  HelperService,
  LeaseScopes,
  LeaseService,
} from '../app/index.ts';
import { ArtifactCache } from '../artifacts/cache.ts';
import { type Config, isLoopbackHost } from '../config.ts';
import { endpointPolicyFromEnv } from '../devices/endpoint-policy.ts';
import { MemoryNodeDirectory, NODE_STALE_BEATS, type NodeDirectory } from '../devices/nodes.ts';
import { openDeviceStores } from '../devices/open-store.ts';
import { DeviceRegistry } from '../devices/registry.ts';
import { DEFAULT_RESET_POLICY, readResetPolicyFile } from '../devices/reset-policy.ts';
import type { DeviceStore } from '../devices/types.ts';
import { DeviceResets } from '../helpers/device-resets.ts';
import { EnsureVerdicts } from '../helpers/snapshot/ensure-helper.ts';
import { LeaseRoom, type OpenScreenSource } from '../lease-session/index.ts';
import { LeaseManager } from '../leases/manager.ts';
import { openLeaseStore } from '../leases/open-store.ts';
import type { LeaseStore } from '../leases/types.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { PeriodicTask } from '../periodic.ts';
import { parseEndpoint } from '../protocol/adb/endpoint.ts';
import type { Services } from '../server/env.ts';
import type { DeviceSource } from './device-source.ts';
import { sweepLeaseState } from './lease-state-sweep.ts';
import { lockDataDir, nodeIdentity } from './node-identity.ts';

export interface DeviceNode {
  /** This node's name (owner of the devices it drives). */
  name: string;
  /** Where every node answers, for handing lease-scoped calls to a device's owner. */
  nodes: NodeDirectory;
  /**
   * Record this node's URL now (its heartbeat keeps it fresh until close; the node is alive in the
   * directory from the start, without a URL until this is called).
   */
  announce(url: string): Promise<void>;
  adb: AdbRuntime;
  devices: DeviceRegistry;
  leases: LeaseManager;
  /** The lease-session room: what leases do on this node's devices, and their teardown. */
  room: LeaseRoom;
  /** The use cases over this device side (what the routes and the CLI call). */
  app: DeviceSide;
  /** What `/readyz` checks of this device side: the adb server and the lease store answer. */
  readiness: Record<string, () => Promise<unknown>>;
  /** Shutdown, first step: refuse new leases and end the waits (UNAVAILABLE, retryable). */
  drain(): void;
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
  /** Opens a lease device's live screen stream (absent: the live screen answers UNAVAILABLE). */
  openScreenSource?: OpenScreenSource;
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
  services.readiness = { ...services.readiness, ...node.readiness };
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
  // Read first: a bad policy file stops the start before anything connects.
  const resetPolicy =
    config.resetPolicyFile === undefined ? DEFAULT_RESET_POLICY : readResetPolicyFile(config.resetPolicyFile);
  // The data dir's identity is one live process's: a second one would be the same node (and its
  // start would delete the first's simulated devices). Released last, after leaving the fleet.
  if (config.nodeName === undefined) {
    const lock = await lockDataDir(config.dataDir);
    teardown.add('data dir lock', () => lock.release());
  }
  const node = await nodeIdentity(config.nodeName, config.dataDir);
  const built =
    options.leaseStore && options.deviceStore
      ? { leaseStore: options.leaseStore, deviceStore: options.deviceStore, nodes: new MemoryNodeDirectory() }
      : await stores(config, logger);
  teardown.add('lease store', () => built.leaseStore.close());
  teardown.add('device store', () => built.deviceStore.close());
  teardown.add('node directory', () => built.nodes.close());

  // Alive in the node directory before registering anything: otherwise a survivor's takeover pass
  // could claim a device this node is registering. The entry lives 3 beats past the last one.
  let url: string | null = null;
  let leaving = false;
  const ttlMs = config.heartbeatMs * NODE_STALE_BEATS;
  const beat = () =>
    leaving
      ? Promise.resolve()
      : built.nodes
          .announce(node, url, ttlMs)
          .catch((err: Error) => logger.warn({ err: err.message }, 'node heartbeat failed'));
  await beat();
  const heartbeat = setInterval(() => void beat(), config.heartbeatMs);
  heartbeat.unref();
  teardown.add('heartbeat', () => clearInterval(heartbeat));
  const adb = await AdbRuntime.start({
    port: config.adbPort,
    adbPath: config.adbPath,
    stateDir: config.dataDir,
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
    nodes: built.nodes,
    baselines: { policy: resetPolicy },
  });
  devices.on('health-pass', () => metrics.healthPasses.inc());
  // A clean shutdown leaves no ghosts: this node leaves the directory at once (its remaining devices
  // read `ownerless` and survivors that reach them take them over) and its simulated devices, which
  // end with it, are removed. Runs after the lease manager and the registry have stopped.
  teardown.add('leave the fleet', async () => {
    leaving = true;
    clearInterval(heartbeat);
    await built.nodes.remove(node);
    await devices.removeOwned('simulator');
  });
  const endpoints = new AdbRelayEndpoints({
    client: adb.client,
    bindHost: config.adbEndpointHost,
    advertisedHost: config.adbEndpointAdvertisedHost ?? config.adbEndpointHost,
    ports: config.adbEndpointPorts,
    // A reverse makes the adb server connect to a bridge-local listener: only on this host.
    ...(config.adbServer !== undefined && !isLoopbackHost(parseEndpoint(config.adbServer).host)
      ? {
          reverseRefusal: `devicebridge: adb reverse needs the bridge's adb server on its own host (ADB_SERVER ${config.adbServer} is remote)`,
        }
      : {}),
    logger,
  });
  teardown.add('adb endpoints', () => endpoints.closeAll());
  const cache = new ArtifactCache(path.join(config.dataDir, 'cache', 'apk'));
  const resets = new DeviceResets({
    adb,
    devices: built.deviceStore,
    policy: resetPolicy,
    releases: options.services.releases,
    store: options.services.store,
    cache,
    verdicts: new EnsureVerdicts(),
    logger,
    remember: (id, baseline) => devices.rememberBaseline(id, baseline),
  });
  const room = new LeaseRoom({
    adb,
    endpoints,
    resets,
    releases: options.services.releases,
    store: options.services.store,
    cache,
    fence: built.leaseStore,
    journal: built.leaseStore,
    helperStatus: devices,
    logger,
    ...(options.openScreenSource === undefined ? {} : { openScreenSource: options.openScreenSource }),
    screen: { maxViewers: config.screenMaxViewers, queueBytes: config.screenViewerQueueBytes },
  });
  teardown.add('lease sessions', () => room.close());
  // A device taken over from a dead node: stop what that node's leases left running on it (its
  // leases' operations here wait for this, and start what they need again on their next call).
  const onClaimed = (event: { id: string; from: string; serial: string }) => {
    void room.cleanAfterTakeover(event.serial, event.from).then((result) => {
      const fields = { deviceId: event.id, from: event.from, ...result };
      const what = 'device taken over: what the dead node left on it cleaned';
      if (result.failures.length > 0) logger.warn(fields, what);
      else logger.info(fields, what);
    });
  };
  devices.on('claimed', onClaimed);
  teardown.add('takeover cleanup', () => void devices.off('claimed', onClaimed));
  const leases = new LeaseManager({
    store: built.leaseStore,
    devices,
    teardown: room,
    node,
    releaseWaitMs: config.releaseWaitMs,
    logger,
    metrics,
  });
  const scopes = new LeaseScopes({
    leases: built.leaseStore,
    devices: built.deviceStore,
    node,
    nodes: built.nodes,
  });
  const helpers = new HelperService({ scopes, room, metrics });
  const glass = new GlassService({ scopes, room });
  const app: DeviceSide = {
    node,
    nodes: built.nodes,
    scopes,
    leases: new LeaseService({ scopes, manager: leases }),
    devices: new DeviceService({
      registry: devices,
      leases: built.leaseStore,
      nodes: built.nodes,
      manager: leases,
    }),
    helpers,
    glass,
    doctor: new DoctorService({
      scopes,
      room,
      helpers,
      glass,
      releases: options.services.releases,
      node,
    }),
    room,
  };

  if (config.devicesFile) await devices.loadConfigFile(config.devicesFile);
  await devices
    .discoverAdbDevices()
    .catch((err: Error) => logger.warn({ err: err.message }, 'adb device discovery failed'));

  // Simulated devices live and die with their node: a previous run's records (a crash) are stale.
  await devices.removeOwned('simulator');
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
    for (const state of ['online', 'offline', 'unauthorized', 'quarantined', 'ownerless']) {
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
  // Per-lease state nobody will tear down here (lease lost with the store, torn down on another
  // node, or its device driven by another node now) is closed on the device.
  const lost = new PeriodicTask(config.healthIntervalMs, () =>
    sweepLeaseState({
      node,
      store: built.leaseStore,
      local: room,
      ownerOf: (deviceId) => devices.ownerOf(deviceId),
      logger,
    }),
  );
  lost.start();
  teardown.add('lost-lease sweep', () => lost.stop());
  leases.start();
  teardown.add('lease manager', () => leases.stop());
  logger.info(
    { node, devices: (await devices.list()).length, store: config.redisUrl ? 'redis' : 'memory' },
    'device node started',
  );

  return {
    name: node,
    nodes: built.nodes,
    async announce(at: string) {
      url = at;
      await beat();
    },
    adb,
    devices,
    leases,
    room,
    app,
    readiness: {
      adbServer: () => pingAdbServer(adb.server.connector, 1000, { responsive: true }),
      leaseStore: () => built.leaseStore.waiting(),
    },
    drain: () => leases.drain(),
    close: () => teardown.run(),
  };
}
