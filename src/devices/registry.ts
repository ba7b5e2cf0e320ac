/**
 * The device registry: every device the bridge can lease, its state, properties and quarantine.
 * This module registers devices and answers queries; the rest lives beside it:
 * `device-state.ts` (the state machine, pure), `health.ts` (what a health pass concludes, the
 * loop), `probes.ts` (getprop, `echo ok`, adb's view), `config-file.ts` (the devices file),
 * `labels.ts` (name rules) and `selector.ts` (the one selector).
 *
 * Sources: tunnels registered through the API or a config file (`register`, `loadConfigFile`),
 * device sources a node is started with (`register` with their source, e.g. `simulator`), and
 * devices the bridge's own adb server sees by itself (`discoverAdbDevices`). Records live behind
 * `DeviceStore` so every node can answer; each record names the node that owns its adb connection
 * (`ownerNode`), and only that node connects, probes and changes its state. Registering on a node
 * that does not own the device only updates labels/provider.
 *
 * Health (`start`/`stop`, `checkHealth` for one pass): every `healthIntervalMs` each owned record is
 * checked against the adb server's device list and online ones get a cheap `echo ok` probe; the
 * pass's conclusion is a state-machine event (failures counted towards quarantine after
 * `quarantineAfterFailures`; an unreachable adb server is not the device's failure; `unauthorized`
 * is a state, not a failure). Tunnel `state` events update the state at once (without counting).
 * While the loop runs, an offline device this node drives is checked again on its own every
 * 500 ms, backing off to 2 s (never more often than the loop), until it is online, unauthorized
 * or no longer offline: a device whose link stayed up (a stall lifted) is leasable again within a
 * second, not at the next pass. These quick checks only ever bring a device back: a failing one is
 * not counted towards quarantine (the loop's passes count). A device online again with failures
 * counted (its tunnel came back) gets the same quick checks until one passes, which ends its run
 * of failures: failures in two outages with the device back in between are not consecutive.
 *
 * Fleet (with a node directory): a record whose owner's heartbeat expired reads as `ownerless`
 * (never leasable). Each health pass takes over ownerless devices this node can reach — tunnels it
 * was configured with itself (devices file or its API), and tunnels registered through any node's
 * API that its tunnel allowlist permits — by a compare-and-set on `ownerNode` (one claimant wins),
 * then connects the tunnel through its own adb server; a tunnel this node holds for a device now
 * owned elsewhere is dropped.
 *
 * Events: `state` {id, state, previous, reason?} on every state change; `removed` {id}; `claimed`
 * {id, from, serial} when this node took a device over (before its tunnel connects).
 */
import { EventEmitter } from 'node:events';
import type { AdbClient } from '../adb/client.ts';
import type { TunnelManager } from '../adb/tunnels.ts';
import { BridgeError, invalidArgument } from '../errors.ts';
import { isSemver } from '../manifest/semver.ts';
import type { Logger } from '../observability/logger.ts';
import { PeriodicTask } from '../periodic.ts';
import { adbFailureCode } from '../protocol/adb/host-protocol.ts';
import { type DeviceBaseline, summarizeBaseline } from './baseline.ts';
import { captureBaseline } from './baseline-capture.ts';
import { prefixed, readDevicesFile } from './config-file.ts';
import {
  type DeviceEffect,
  type DeviceEvent,
  deviceStateFromAdb,
  type ObservedState,
  transition,
} from './device-state.ts';
import type { EndpointPolicy } from './endpoint-policy.ts';
import { healthEvent, tunnelAction } from './health.ts';
import { LABEL_PATTERN, validateLabels, validateProvider } from './labels.ts';
import type { NodeDirectory } from './nodes.ts';
import { observeState, probeDevice, readProperties } from './probes.ts';
import { deviceIdFor } from './properties.ts';
import type { ResetPolicy } from './reset-policy.ts';
import { type LeaseSelector as DeviceSelector, validateSelector } from './selector.ts';
import type { DeviceProperties, DeviceRecord, DeviceState, DeviceStore, StoreGeneration } from './types.ts';

export { deviceStateFromAdb } from './device-state.ts';
export type { LeaseSelector as DeviceSelector } from './selector.ts';

/**
 * Which lease holds a device, if any: the lease store answers it (the registry is below the leases
 * and names only what it asks). `remove` and `recordBaseline` refuse a leased device.
 */
export interface DeviceLeases {
  leaseOfDevice(deviceId: string): Promise<{ id: string } | null>;
}

export interface RegisterRequest {
  endpoint: string;
  /** Replaces the labels of an existing record; absent keeps them (new record: none). */
  labels?: Record<string, string>;
  /** Replaces the provider of an existing record; absent keeps it. */
  provider?: string;
  source?: 'api' | 'config' | 'simulator';
}

export interface DeviceRegistryOptions {
  store: DeviceStore;
  client: AdbClient;
  tunnels: TunnelManager;
  policy: EndpointPolicy;
  /** This bridge node's name (recorded as `ownerNode`). */
  node: string;
  healthIntervalMs?: number;
  quarantineAfterFailures?: number;
  logger?: Logger;
  /** The lease store: `remove` refuses a leased device unless forced. */
  leases?: DeviceLeases;
  /** Deadline of the `echo ok` probe and of `getprop` (default 5000 ms). */
  probeTimeoutMs?: number;
  /** How long `register` waits for a new tunnel to settle (device/unauthorized) (default 3000 ms). */
  connectWaitMs?: number;
  /** Which nodes are alive (the node directory): records of dead owners read `ownerless` and may be taken over. */
  nodes?: Pick<NodeDirectory, 'alive'>;
  /** Run `discoverAdbDevices` on every health tick (default false). */
  autoDiscover?: boolean;
  /**
   * The reset between tenants: a device is leasable only once its baseline is recorded, which this
   * node does for the devices it drives as soon as they are online (registration, health pass).
   */
  baselines?: { policy: ResetPolicy };
  now?: () => number;
}

export interface StateEvent {
  id: string;
  state: DeviceState;
  previous: DeviceState | undefined;
  reason?: string;
}

export interface MatchResult {
  /** Every record satisfying the selector, whatever its state (sorted by id). */
  matching: string[];
  /** The subset that is `online` now (same order). */
  available: string[];
  /**
   * Devices satisfying the selector whose records this node read from the store within the last
   * minute, before the store lost its data (Redis restarted empty), and that it does not have again
   * yet (sorted by id): their owner puts them back at its next health pass. (A record removed on
   * purpose is not missing: the store kept its generation.) Read only when nothing matches.
   */
  missing: string[];
  /**
   * Nothing matches and the store lost its data less than a minute ago: records this node never
   * read may be put back shortly (a node started during the loss knows no ids to call missing) —
   * unless the devices the selector matched were removed since.
   */
  restoring: boolean;
}

const HEALTH_CONCURRENCY = 8;
/** How long a record read from the store counts as `missing` once the store no longer has it. */
const MISSING_GRACE_MS = 60_000;
/** Clocks of nodes may differ by this much: a record seen this soon after a loss may be a lost one. */
const CLOCK_SKEW_MS = 5000;
/** The first and the longest wait between quick checks of an offline device (see the header). */
const RECHECK_FIRST_MS = 500;
const RECHECK_MAX_MS = 2000;

/** Does `record` satisfy `selector` (ignoring state)? An sdk bound never matches an unknown sdk. */
export function matchesSelector(record: DeviceRecord, selector: DeviceSelector): boolean {
  if (selector.deviceId !== undefined && record.id !== selector.deviceId) return false;
  for (const [key, value] of Object.entries(selector.labels ?? {})) {
    if (!Object.hasOwn(record.labels, key) || record.labels[key] !== value) return false;
  }
  const sdk = record.properties.sdk;
  if (selector.sdkMin !== undefined && (sdk === undefined || sdk < selector.sdkMin)) return false;
  if (selector.sdkMax !== undefined && (sdk === undefined || sdk > selector.sdkMax)) return false;
  return true;
}

/** An offline device, or one online again whose run of failures no passing check has ended yet. */
function needsRecheck(record: DeviceRecord): boolean {
  return record.state === 'offline' || (record.state === 'online' && record.consecutiveFailures > 0);
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class DeviceRegistry extends EventEmitter {
  readonly #store: DeviceStore;
  readonly #client: AdbClient;
  readonly #tunnels: TunnelManager;
  readonly #policy: EndpointPolicy;
  readonly #node: string;
  readonly #interval: number;
  readonly #threshold: number;
  readonly #logger: Logger | undefined;
  readonly #leases: DeviceLeases | undefined;
  readonly #probeTimeout: number;
  readonly #connectWait: number;
  readonly #autoDiscover: boolean;
  readonly #nodes: Pick<NodeDirectory, 'alive'> | undefined;
  readonly #baselines: { policy: ResetPolicy } | undefined;
  /**
   * The baselines of the devices this node recorded or reset (the node drives them): put back with
   * their records when the store lost its data, so a reset still finds what to restore.
   */
  readonly #baselineCopies = new Map<string, DeviceBaseline>();
  /** Baseline readings in progress, by device id (one at a time per device). */
  readonly #capturing = new Map<string, Promise<DeviceRecord>>();
  /** Tunnels this node was configured with (devices file, API): the devices it may take over. */
  readonly #reachable = new Set<string>();
  readonly #now: () => number;
  readonly #loop: PeriodicTask;
  /** Quick checks of offline devices this node drives: the pending timer or the check running, by id. */
  readonly #rechecks = new Map<string, { timer?: NodeJS.Timeout; run?: Promise<void> }>();
  /**
   * The records of the devices this node drives, as last seen in the store: the node is the source
   * of truth for what it is connected to, so a record the store lost (Redis restarted empty) is
   * put back from here by the next health pass.
   */
  readonly #driven = new Map<string, DeviceRecord>();
  /**
   * The ids removed while each health pass in flight runs: a pass that listed a device before its
   * removal must neither reconnect its tunnel nor put its record back.
   */
  readonly #removedDuringPasses = new Set<Set<string>>();
  /** Every record as last read from the store, with when (what `match` reports as `missing`). */
  readonly #seen = new Map<string, { record: DeviceRecord; at: number; generation: string | undefined }>();
  /** The store's generation as this node last read it (at every health pass and when nothing matches). */
  #generation: StoreGeneration | undefined;
  readonly #onTunnelState = (event: { endpoint: string; state: string }) => {
    this.#fromTunnel(event.endpoint, event.state).catch((err) =>
      this.#logger?.warn({ endpoint: event.endpoint, err: message(err) }, 'device state update failed'),
    );
  };

  constructor(options: DeviceRegistryOptions) {
    super();
    this.#store = options.store;
    this.#client = options.client;
    this.#tunnels = options.tunnels;
    this.#policy = options.policy;
    this.#node = options.node;
    this.#interval = options.healthIntervalMs ?? 5000;
    this.#threshold = options.quarantineAfterFailures ?? 5;
    this.#logger = options.logger;
    this.#leases = options.leases;
    this.#probeTimeout = options.probeTimeoutMs ?? 5000;
    this.#connectWait = options.connectWaitMs ?? 3000;
    this.#autoDiscover = options.autoDiscover ?? false;
    this.#nodes = options.nodes;
    this.#baselines = options.baselines;
    this.#now = options.now ?? Date.now;
    if (!Number.isInteger(this.#threshold) || this.#threshold < 1) {
      throw new BridgeError('INVALID_ARGUMENT', 'quarantineAfterFailures must be a positive integer');
    }
    if (!(this.#interval > 0)) throw new BridgeError('INVALID_ARGUMENT', 'healthIntervalMs must be positive');
    this.#loop = new PeriodicTask(this.#interval, () =>
      this.checkHealth().catch((err) =>
        this.#logger?.warn({ err: message(err) }, 'device health check failed'),
      ),
    );
  }

  get node(): string {
    return this.#node;
  }

  // -------------------------------------------------------------------------------------------
  // Registration.

  /**
   * Register a tunnel `host:port`: policy check (before any connection attempt), labels and provider
   * validated, tunnel added, properties read with one `getprop` when online, record stored.
   * Idempotent for the same endpoint (labels/provider updated); CONFLICT when the id belongs to a
   * different endpoint.
   */
  async register(request: RegisterRequest): Promise<DeviceRecord> {
    if (typeof request !== 'object' || request === null)
      throw invalidArgument('device registration must be an object');
    const decision = await this.#policy.check(request.endpoint);
    const endpoint = decision.endpoint;
    const labels = request.labels === undefined ? undefined : validateLabels(request.labels);
    const provider = validateProvider(request.provider);
    const source = request.source ?? 'api';
    if (!['api', 'config', 'simulator'].includes(source)) {
      throw invalidArgument(`source ${JSON.stringify(source)} must be api, config or simulator`);
    }
    const id = deviceIdFor(endpoint);
    if (source !== 'simulator') this.#reachable.add(endpoint);

    const existing = await this.#store.get(id);
    if (existing) {
      const adoptable = existing.endpoint === undefined && existing.serial === endpoint;
      if (existing.endpoint !== endpoint && !adoptable) {
        throw new BridgeError(
          'CONFLICT',
          `device id ${id} is already registered for ${existing.endpoint ?? `adb serial ${existing.serial}`}, not ${endpoint}`,
          { details: { deviceId: id, endpoint, existingEndpoint: existing.endpoint ?? null } },
        );
      }
      const updated = await this.#update(id, (r) => ({
        ...r,
        endpoint,
        ...(labels === undefined ? {} : { labels }),
        ...(provider === undefined ? {} : { provider }),
        ...(adoptable ? { source } : {}),
        updatedAt: this.#now(),
      }));
      if (!updated) return this.register(request); // removed meanwhile: register afresh
      if (updated.ownerNode === this.#node && this.#tunnels.status(endpoint) === undefined) {
        await this.#tunnels.add(endpoint);
        await this.#refresh(id, endpoint);
      } else if (updated.ownerNode === this.#node && this.#tunnels.status(endpoint)?.state !== 'device') {
        // Registering again is an operator's way to say "try now".
        this.#tunnels.reconnect(endpoint);
      }
      this.#logger?.info({ deviceId: id, endpoint }, 'device registration updated');
      return (await this.#store.get(id)) ?? updated;
    }

    await this.#tunnels.add(endpoint);
    try {
      const state = deviceStateFromAdb(await this.#settle(endpoint));
      const properties = state === 'online' ? await this.#readProperties(endpoint) : undefined;
      const now = this.#now();
      const record: DeviceRecord = {
        id,
        serial: endpoint,
        endpoint,
        ...(provider === undefined ? {} : { provider }),
        labels: labels ?? {},
        state,
        properties: properties ?? {},
        helpers: {},
        source,
        ownerNode: this.#node,
        consecutiveFailures: 0,
        createdAt: now,
        updatedAt: now,
      };
      await this.#put(record);
      this.#logger?.info({ deviceId: id, endpoint, state, rule: decision.rule }, 'device registered');
      this.emit('state', { id, state, previous: undefined } satisfies StateEvent);
      if (state === 'online') return (await this.#baselineIfMissing(record)) ?? record;
      return record;
    } catch (err) {
      await this.#tunnels.remove(endpoint).catch(() => undefined);
      throw err;
    }
  }

  /** Wait (up to connectWaitMs) for a just-added tunnel to reach `device` or `unauthorized`. */
  async #settle(endpoint: string): Promise<string | undefined> {
    const settled = (s: string | undefined) => s === 'device' || s === 'unauthorized';
    const now = this.#tunnels.status(endpoint)?.state;
    if (settled(now)) return now;
    return new Promise((resolve) => {
      const done = (state: string | undefined) => {
        clearTimeout(timer);
        this.#tunnels.off('state', onState);
        resolve(state);
      };
      const onState = (e: { endpoint: string; state: string }) => {
        if (e.endpoint === endpoint && settled(e.state)) done(e.state);
      };
      const timer = setTimeout(() => done(this.#tunnels.status(endpoint)?.state), this.#connectWait);
      this.#tunnels.on('state', onState);
    });
  }

  /**
   * Register every entry of a JSON config file `[{endpoint, labels?, provider?}]` (source `config`).
   * Every entry is validated (shape, labels, policy) before any is registered; errors name the
   * file and the entry index.
   */
  async loadConfigFile(path: string): Promise<DeviceRecord[]> {
    const requests = await readDevicesFile(path, this.#policy);
    const records: DeviceRecord[] = [];
    for (const [index, request] of requests.entries()) {
      try {
        records.push(await this.register(request));
      } catch (err) {
        throw prefixed(err, `device config ${path} entry ${index}`, { entry: index, file: path });
      }
    }
    return records;
  }

  /**
   * Devices the bridge's adb server sees by itself (USB, or connected outside the tunnel manager)
   * become records with source `adb` and no endpoint. Resolves the records it added.
   */
  async discoverAdbDevices(list?: Array<{ serial: string; state: string }>): Promise<DeviceRecord[]> {
    const devices = list ?? (await this.#client.devices({ timeoutMs: this.#probeTimeout }));
    const added: DeviceRecord[] = [];
    for (const device of devices) {
      if (this.#tunnels.status(device.serial) !== undefined) continue;
      let id: string;
      try {
        id = deviceIdFor(device.serial);
      } catch {
        this.#logger?.warn(
          { serial: device.serial.slice(0, 80) },
          'adb device with an unusable serial ignored',
        );
        continue;
      }
      if ((await this.#store.get(id)) !== null) continue;
      const state = deviceStateFromAdb(device.state);
      const properties = state === 'online' ? await this.#readProperties(device.serial) : undefined;
      const now = this.#now();
      const record: DeviceRecord = {
        id,
        serial: device.serial,
        labels: {},
        state,
        properties: properties ?? {},
        helpers: {},
        source: 'adb',
        ownerNode: this.#node,
        consecutiveFailures: 0,
        createdAt: now,
        updatedAt: now,
      };
      await this.#put(record);
      this.#logger?.info({ deviceId: id, serial: device.serial, state }, 'adb device discovered');
      this.emit('state', { id, state, previous: undefined } satisfies StateEvent);
      added.push(record);
    }
    return added;
  }

  // -------------------------------------------------------------------------------------------
  // Queries and admin actions.

  /** Every record; one whose owner's heartbeat expired reads `ownerless`. */
  async list(): Promise<DeviceRecord[]> {
    await this.#knowGeneration();
    return this.#withOwners(this.#saw(await this.#store.list()));
  }

  /** Read the store's generation once before this node's first read of records (see `#seen`). */
  async #knowGeneration(): Promise<void> {
    if (this.#generation === undefined) await this.#refreshGeneration();
  }

  /** `#readGeneration`, where a failure is only logged (the last generation read stays). */
  async #refreshGeneration(): Promise<void> {
    await this.#readGeneration().catch((err) =>
      this.#logger?.warn({ err: message(err) }, 'device store generation unreadable'),
    );
  }

  /** Remember the records read from the store (and forget those seen too long ago); resolves them. */
  #saw(records: DeviceRecord[]): DeviceRecord[] {
    const at = this.#now();
    const generation = this.#generation?.id;
    for (const record of records) this.#seen.set(record.id, { record, at, generation });
    for (const [id, seen] of this.#seen) if (at - seen.at > MISSING_GRACE_MS) this.#seen.delete(id);
    return records;
  }

  /**
   * A record this node removes on purpose: seen now, under the store's generation now, so `match`
   * calls it removed (NOT_FOUND), not lost with the store's data.
   */
  async #sawRemoved(record: DeviceRecord): Promise<void> {
    const generation = await this.#readGeneration().catch(() => undefined);
    this.#seen.set(record.id, { record, at: this.#now(), generation: generation?.id });
  }

  /** The owner node of a device, null when it has no record. */
  async ownerOf(id: string): Promise<string | null> {
    return (await this.#store.get(id))?.ownerNode ?? null;
  }

  /** The owners among these nodes that are alive (this node always is; every node without a directory). */
  async #liveOwners(records: readonly DeviceRecord[]): Promise<Set<string>> {
    const others = [...new Set(records.map((r) => r.ownerNode))].filter((n) => n !== this.#node);
    const alive = this.#nodes === undefined ? new Set(others) : await this.#nodes.alive(others);
    alive.add(this.#node);
    return alive;
  }

  /** Records as readers see them: a dead owner's device is `ownerless`. */
  async #withOwners(records: DeviceRecord[]): Promise<DeviceRecord[]> {
    const alive = await this.#liveOwners(records);
    return records.map((r) => (alive.has(r.ownerNode) ? r : { ...r, state: 'ownerless' }));
  }

  /** The record, or NOT_FOUND naming the id. */
  async get(id: string): Promise<DeviceRecord> {
    const record = typeof id === 'string' ? await this.#store.get(id) : null;
    if (!record) {
      throw new BridgeError('NOT_FOUND', `device ${JSON.stringify(String(id).slice(0, 128))} not found`, {
        details: { deviceId: id },
      });
    }
    return (await this.#withOwners([record]))[0]!;
  }

  /** Remove a device: CONFLICT while leased unless `force`; the tunnel is disconnected. */
  async remove(id: string, options: { force?: boolean } = {}): Promise<void> {
    const record = await this.get(id);
    if (
      options.force !== true &&
      this.#leases !== undefined &&
      (await this.#leases.leaseOfDevice(id)) !== null
    ) {
      throw new BridgeError(
        'CONFLICT',
        `device ${id} is leased; release the lease first or remove with force`,
        {
          details: { deviceId: id },
        },
      );
    }
    if (record.endpoint !== undefined && record.ownerNode === this.#node) {
      await this.#tunnels.remove(record.endpoint);
    }
    this.#driven.delete(id);
    for (const removed of this.#removedDuringPasses) removed.add(id);
    await this.#sawRemoved(record);
    await this.#store.delete(id);
    this.#logger?.info({ deviceId: id, forced: options.force === true }, 'device removed');
    this.emit('removed', { id });
  }

  /**
   * Remove this node's records of one source, leased or not: the simulated devices a previous run
   * of this node left behind (their simulator ended with it), or this node's own at a clean
   * shutdown. Resolves the removed ids.
   */
  async removeOwned(source: DeviceRecord['source']): Promise<string[]> {
    const removed: string[] = [];
    for (const record of await this.#store.list()) {
      if (record.ownerNode !== this.#node || record.source !== source) continue;
      if (record.endpoint !== undefined && this.#tunnels.status(record.endpoint) !== undefined) {
        await this.#tunnels.remove(record.endpoint).catch(() => undefined);
      }
      this.#driven.delete(record.id);
      for (const removed of this.#removedDuringPasses) removed.add(record.id);
      await this.#sawRemoved(record);
      if (!(await this.#store.delete(record.id))) continue;
      removed.push(record.id);
      this.emit('removed', { id: record.id });
    }
    if (removed.length > 0)
      this.#logger?.info({ source, devices: removed.length }, 'own device records removed');
    return removed;
  }

  /** Quarantine a device with a reason; it stays quarantined until `clearQuarantine`. */
  async quarantine(id: string, reason: string): Promise<DeviceRecord> {
    if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 1000) {
      throw invalidArgument('a quarantine reason must be a non-empty string of at most 1000 characters');
    }
    return (await this.#step(id, { type: 'quarantine', reason })) ?? this.get(id);
  }

  /**
   * Whether a teardown that failed on this device failed because the device did not answer — then
   * it is run again once the device is back instead of quarantining it: a failure says adb could not
   * reach it (offline, not connected, unauthorized, adb server unreachable: it may be back already),
   * or a probe now gets no answer. False for a device without a record.
   */
  async unreachable(id: string, failures: readonly string[]): Promise<boolean> {
    const record = await this.#store.get(id);
    if (record === null) return false;
    const away = new Set(['DEVICE_OFFLINE', 'UNAUTHORIZED_DEVICE', 'UNAVAILABLE']);
    if (failures.some((f) => away.has(adbFailureCode(f).code))) return true;
    return (await probeDevice(this.#client, record.serial, this.#probeTimeout)) !== null;
  }

  /** Admin: lift a quarantine; the state is re-read from adb at once and the failure count reset. */
  async clearQuarantine(id: string): Promise<DeviceRecord> {
    const record = await this.get(id);
    if (record.state !== 'quarantined') return record;
    const observed = await observeState(this.#client, record.serial, this.#probeTimeout);
    return (await this.#step(id, { type: 'clear', observed })) ?? this.get(id);
  }

  /** Record the last helper verdict seen on this node. */
  async setHelperStatus(
    id: string,
    name: string,
    status: { versionCode: number; version?: string; sha256: string },
  ): Promise<DeviceRecord> {
    if (typeof name !== 'string' || !LABEL_PATTERN.test(name)) {
      throw invalidArgument(
        `helper name ${JSON.stringify(String(name).slice(0, 80))} must match [A-Za-z0-9._/-]{1,63}`,
      );
    }
    if (!Number.isInteger(status.versionCode) || status.versionCode < 1) {
      throw invalidArgument('helper versionCode must be an integer ≥ 1');
    }
    if (typeof status.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(status.sha256)) {
      throw invalidArgument('helper sha256 must be 64 hex characters');
    }
    if (status.version !== undefined && (typeof status.version !== 'string' || !isSemver(status.version))) {
      throw invalidArgument(
        `helper version ${JSON.stringify(String(status.version).slice(0, 80))} must be a semantic version`,
      );
    }
    const entry = {
      versionCode: status.versionCode,
      ...(status.version === undefined ? {} : { version: status.version }),
      sha256: status.sha256.toLowerCase(),
      checkedAt: this.#now(),
    };
    const updated = await this.#update(id, (r) => {
      const helpers = { ...r.helpers };
      Object.defineProperty(helpers, name, {
        value: entry,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return { ...r, helpers, updatedAt: this.#now() };
    });
    return updated ?? this.get(id);
  }

  /**
   * Record the device's baseline for the reset between tenants, now (an admin's refresh, or the
   * first time it is online): what adb sees of it becomes what every reset restores. Only on the
   * node that drives it, never while it is leased (CONFLICT), only when it is online
   * (DEVICE_OFFLINE). Resolves the record with the baseline's counts.
   */
  async recordBaseline(id: string, options: { underLease?: string } = {}): Promise<DeviceRecord> {
    const baselines = this.#baselines;
    if (baselines === undefined)
      throw new BridgeError('UNAVAILABLE', 'this bridge runs without the reset between tenants');
    const running = this.#capturing.get(id);
    if (running !== undefined) return running;
    const work = (async () => {
      const record = await this.get(id);
      if (record.ownerNode !== this.#node) {
        throw new BridgeError(
          'CONFLICT',
          `device ${id} is driven by bridge node ${record.ownerNode}: record its baseline there`,
          {
            details: { deviceId: id, ownerNode: record.ownerNode },
          },
        );
      }
      if (record.state !== 'online') {
        throw new BridgeError(
          'DEVICE_OFFLINE',
          `device ${id} is ${record.state}: its baseline is read from the device`,
          {
            details: { deviceId: id, state: record.state },
          },
        );
      }
      const lease = await this.#leases?.leaseOfDevice(id);
      if (lease && lease.id !== options.underLease) {
        throw new BridgeError('CONFLICT', `device ${id} is leased: its baseline is recorded between leases`, {
          details: { deviceId: id },
        });
      }
      const baseline = await captureBaseline(
        { serial: record.serial, shell: (command, o) => this.#client.shell(record.serial, command, o) },
        baselines.policy,
        this.#now(),
      );
      await this.#store.putBaseline(id, baseline);
      this.rememberBaseline(id, baseline);
      const summary = summarizeBaseline(baseline);
      const updated = await this.#update(id, (r) => ({
        ...r,
        baseline: summary,
        updatedAt: this.#now(),
      }));
      if (updated === null)
        throw new BridgeError('NOT_FOUND', `device ${id} not found`, { details: { deviceId: id } });
      this.#logger?.info({ deviceId: id, ...summary }, 'device baseline recorded');
      return updated;
    })();
    this.#capturing.set(id, work);
    try {
      return await work;
    } finally {
      this.#capturing.delete(id);
    }
  }

  /** Keep a copy of a device's baseline as stored (after a reset updated it too). */
  rememberBaseline(id: string, baseline: DeviceBaseline): void {
    this.#baselineCopies.set(id, structuredClone(baseline));
  }

  /** The first baseline of an online device this node drives (failures logged; the next pass retries). */
  async #baselineIfMissing(record: DeviceRecord): Promise<DeviceRecord | null> {
    if (this.#baselines === undefined || record.baseline !== undefined || record.ownerNode !== this.#node)
      return null;
    try {
      return await this.recordBaseline(record.id);
    } catch (err) {
      this.#logger?.warn(
        { deviceId: record.id, err: message(err) },
        'device baseline not recorded yet (not leasable)',
      );
      return null;
    }
  }

  /**
   * Devices matching a selector: `matching` whatever their state, `available` those online now.
   * Both sorted by id.
   */
  async match(selector: DeviceSelector): Promise<MatchResult> {
    const valid = validateSelector(selector);
    await this.#knowGeneration();
    let stored = await this.#store.list();
    // A device this node drives whose record the store lost (Redis restarted empty) is put back at
    // once, not at the next health pass: its lease requests need not wait for it. The loss is read
    // first (a node that knew the old generation makes the new one `afterLoss`).
    const ids = new Set(stored.map((r) => r.id));
    if ([...this.#driven.keys()].some((id) => !ids.has(id))) {
      await this.#refreshGeneration();
      await this.#republish(stored);
      stored = await this.#store.list();
    }
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const matching = (await this.#withOwners(this.#saw(stored))).filter((r) => matchesSelector(r, valid));
    matching.sort(byId);
    let missing: DeviceRecord[] = [];
    let restoring = false;
    if (matching.length === 0) {
      // Lost or removed? A record seen under another generation than the store's now was lost with
      // the data; one seen under this one was removed on purpose. (Seen before this node knew any
      // generation: by the time, with a margin for the clocks of nodes.)
      const generation = await this.#readGeneration();
      const now = new Set(stored.map((r) => r.id));
      const gone = [...this.#seen.values()].filter(
        (seen) => !now.has(seen.record.id) && matchesSelector(seen.record, valid),
      );
      missing = gone
        .filter((seen) =>
          seen.generation === undefined
            ? seen.at < generation.since + CLOCK_SKEW_MS
            : seen.generation !== generation.id,
        )
        .map((seen) => seen.record)
        .sort(byId);
      // Not while the selector's devices are known to have been removed since.
      restoring =
        generation.afterLoss &&
        this.#now() - generation.since < MISSING_GRACE_MS &&
        gone.length === missing.length;
    }
    return {
      matching: matching.map((r) => r.id),
      available: matching
        .filter((r) => r.state === 'online' && (this.#baselines === undefined || r.baseline !== undefined))
        .map((r) => r.id),
      missing: missing.map((r) => r.id),
      restoring,
    };
  }

  /** Write a record; one this node owns is remembered as driven (what a health pass puts back). */
  async #put(record: DeviceRecord): Promise<void> {
    await this.#store.put(record);
    this.#noteDriven(record);
  }

  /** `DeviceStore.update`, remembering the result like `#put`. */
  async #update(id: string, change: (record: DeviceRecord) => DeviceRecord): Promise<DeviceRecord | null> {
    const updated = await this.#store.update(id, change);
    if (updated !== null) this.#noteDriven(updated);
    return updated;
  }

  /**
   * Keep the driven copy as fresh as this node's last write: a record put back after a loss then
   * carries what was last written (its baseline, its state), not what the last health pass read.
   */
  #noteDriven(record: DeviceRecord): void {
    if (record.ownerNode === this.#node) this.#driven.set(record.id, record);
    else this.#driven.delete(record.id);
  }

  /** The store's generation (made again, as after a loss, when this node knew one the store lost). */
  async #readGeneration(): Promise<StoreGeneration> {
    const known = this.#generation?.id;
    const generation = await this.#store.generation(known);
    if (known !== undefined && generation.id !== known) {
      this.#logger?.warn(
        { since: generation.since },
        'the device store lost its data: records are being put back',
      );
    }
    this.#generation = generation;
    return generation;
  }

  /**
   * One step of the state machine inside the store's atomic update (on the record as stored then),
   * with `properties` written along when given; then its effects. Null when the record is gone.
   */
  async #step(id: string, event: DeviceEvent, properties?: DeviceProperties): Promise<DeviceRecord | null> {
    let effects: DeviceEffect[] = [];
    const updated = await this.#update(id, (r) => {
      const t = transition(r, event, this.#threshold);
      effects = t.effects;
      const { quarantineReason: _old, ...rest } = r;
      return {
        ...rest,
        ...t.next,
        ...(properties === undefined ? {} : { properties }),
        updatedAt: this.#now(),
      };
    });
    if (updated) for (const effect of effects) this.#carryOut(id, effect);
    if (updated !== null && updated.ownerNode === this.#node && needsRecheck(updated)) this.#recheckSoon(id);
    return updated;
  }

  #carryOut(id: string, effect: DeviceEffect): void {
    const { state, previous, reason } = effect;
    this.#logger?.info({ deviceId: id, state, previous, reason }, 'device state changed');
    this.emit('state', { id, state, previous, ...(reason ? { reason } : {}) } satisfies StateEvent);
  }

  // -------------------------------------------------------------------------------------------
  // adb I/O.

  #readProperties(serial: string): Promise<DeviceProperties | undefined> {
    return readProperties(this.#client, serial, this.#probeTimeout, this.#logger);
  }

  /** Re-read state (and properties when missing) of one record, no failure counting. */
  async #refresh(id: string, serial: string): Promise<void> {
    const record = await this.#store.get(id);
    if (!record) return;
    const observed = await observeState(this.#client, serial, this.#probeTimeout);
    await this.#apply(record, observed, { count: false });
  }

  async #fromTunnel(endpoint: string, adbState: string): Promise<void> {
    let id: string;
    try {
      id = deviceIdFor(endpoint);
    } catch {
      return;
    }
    const record = await this.#store.get(id);
    if (!record || record.endpoint !== endpoint || record.ownerNode !== this.#node) return;
    await this.#apply(record, deviceStateFromAdb(adbState), { count: false });
  }

  /**
   * Write an observation: the new state (a quarantined device stays quarantined), the failure count
   * when `count`, properties when they were missing, quarantine when the count reaches the threshold.
   */
  async #apply(
    seen: DeviceRecord,
    observed: ObservedState,
    options: { count: boolean; failure?: string },
  ): Promise<void> {
    const event: DeviceEvent = {
      type: 'observed',
      observed,
      count: options.count,
      ...(options.failure === undefined ? {} : { failure: options.failure }),
    };
    const needsProps = observed === 'online' && Object.keys(seen.properties).length === 0;
    const properties = needsProps ? await this.#readProperties(seen.serial) : undefined;
    if (properties === undefined && !transition(seen, event, this.#threshold).changed) return;
    await this.#step(seen.id, event, properties);
  }

  // -------------------------------------------------------------------------------------------
  // Health loop.

  /** Start the health loop (first check right away) and follow tunnel state events. */
  start(): void {
    if (this.#loop.running) return;
    this.#tunnels.on('state', this.#onTunnelState);
    this.#loop.start();
  }

  /** Stop the loop; resolves once a check in progress has finished. */
  async stop(): Promise<void> {
    this.#tunnels.off('state', this.#onTunnelState);
    await this.#loop.stop();
    const running = [...this.#rechecks.values()];
    this.#rechecks.clear();
    for (const r of running) clearTimeout(r.timer);
    await Promise.all(running.map((r) => r.run));
  }

  /** Check an offline device this node drives again after `delayMs`, then with backoff (see the header). */
  #recheckSoon(id: string, delayMs = RECHECK_FIRST_MS): void {
    if (!this.#loop.running || this.#rechecks.has(id)) return;
    const delay = Math.min(delayMs, RECHECK_MAX_MS, this.#interval);
    const entry: { timer?: NodeJS.Timeout; run?: Promise<void> } = {};
    entry.timer = setTimeout(() => {
      entry.run = this.#recheck(id).then(
        (again) => {
          if (this.#rechecks.get(id) !== entry) return; // stopped meanwhile
          this.#rechecks.delete(id);
          if (again) this.#recheckSoon(id, delay * 2);
        },
        (err) => {
          this.#logger?.warn({ deviceId: id, err: message(err) }, 'device quick check failed');
          if (this.#rechecks.get(id) === entry) this.#rechecks.delete(id);
        },
      );
    }, delay);
    entry.timer.unref?.();
    this.#rechecks.set(id, entry);
  }

  /**
   * One quick check of an offline device (or one back with failures counted): what a health pass
   * concludes, written only when it is not offline (an offline conclusion is left to the loop, which
   * counts it). True when it is still to be checked again on this node.
   */
  async #recheck(id: string): Promise<boolean> {
    const record = await this.#store.get(id);
    if (!record || record.ownerNode !== this.#node || !needsRecheck(record)) return false;
    let adb: Map<string, string>;
    try {
      adb = new Map(
        (await this.#client.devices({ timeoutMs: this.#probeTimeout })).map((d) => [d.serial, d.state]),
      );
    } catch {
      return true; // the adb server is not the device's failure: the loop sees to it
    }
    const tunnel = record.endpoint === undefined ? undefined : this.#tunnels.status(record.endpoint);
    const event = await healthEvent(record, adb, tunnel?.state, () =>
      probeDevice(this.#client, record.serial, this.#probeTimeout),
    );
    if (event.type !== 'observed' || event.observed === 'offline') return true;
    await this.#apply(record, event.observed, { count: event.count });
    if (event.observed === 'online' && record.baseline === undefined) {
      const now = await this.#store.get(record.id);
      if (now?.state === 'online') await this.#baselineIfMissing(now);
    }
    return false;
  }

  /**
   * One health pass over the records this node owns (what the loop runs every interval); emits
   * `health-pass` when it completed.
   */
  async checkHealth(): Promise<void> {
    const removed = new Set<string>();
    this.#removedDuringPasses.add(removed);
    try {
      await this.#healthPass(removed);
    } finally {
      this.#removedDuringPasses.delete(removed);
    }
    this.emit('health-pass');
  }

  async #healthPass(removed: ReadonlySet<string>): Promise<void> {
    let adb: Map<string, string> | null;
    try {
      adb = new Map(
        (await this.#client.devices({ timeoutMs: this.#probeTimeout })).map((d) => [d.serial, d.state]),
      );
    } catch (err) {
      this.#logger?.warn({ err: message(err) }, 'adb server unreachable during health check');
      adb = null;
    }
    if (this.#autoDiscover && adb !== null) {
      await this.discoverAdbDevices([...adb].map(([serial, state]) => ({ serial, state }))).catch((err) =>
        this.#logger?.warn({ err: message(err) }, 'adb discovery failed'),
      );
    }
    // Every pass: a node that knew the store's generation is the one to tell a loss from a fresh store.
    await this.#refreshGeneration();
    const listed = this.#saw(await this.#store.list());
    // Removed since the list was read: gone for this pass too.
    const records = listed.filter((r) => !removed.has(r.id));
    await this.#takeOver(records);
    const owned = await this.#republish(records);
    for (let i = 0; i < owned.length; i += HEALTH_CONCURRENCY) {
      const batch = owned.slice(i, i + HEALTH_CONCURRENCY).filter((r) => !removed.has(r.id));
      await Promise.all(batch.map((r) => this.#checkOne(r, adb)));
    }
  }

  /**
   * Take over the devices of dead owners that this node can reach (one compare-and-set on the owner
   * each: one claimant wins), and drop tunnels this node holds for devices another node owns.
   * Claimed records are changed in `records` in place, so the pass checks them at once.
   */
  async #takeOver(records: DeviceRecord[]): Promise<void> {
    for (const r of records) {
      if (r.ownerNode !== this.#node && r.endpoint !== undefined && this.#tunnels.status(r.endpoint)) {
        this.#logger?.info(
          { deviceId: r.id, ownerNode: r.ownerNode },
          'device owned elsewhere: tunnel dropped',
        );
        await this.#tunnels.remove(r.endpoint).catch(() => undefined);
      }
    }
    const others = records.filter((r) => r.ownerNode !== this.#node && r.endpoint !== undefined);
    if (others.length === 0 || this.#nodes === undefined) return;
    const alive = await this.#liveOwners(others);
    for (const [i, r] of records.entries()) {
      if (!others.includes(r) || alive.has(r.ownerNode) || !(await this.#canReach(r))) continue;
      const from = r.ownerNode;
      const claimed = await this.#update(r.id, (cur) =>
        cur.ownerNode !== from
          ? cur
          : {
              ...cur,
              ownerNode: this.#node,
              state: cur.state === 'quarantined' ? cur.state : 'offline',
              consecutiveFailures: 0,
              updatedAt: this.#now(),
            },
      );
      if (claimed?.ownerNode !== this.#node) continue; // another survivor won, or it is gone
      records[i] = claimed;
      this.#logger?.warn({ deviceId: r.id, from }, 'device taken over from a dead node');
      this.emit('claimed', { id: r.id, from, serial: claimed.serial });
      const endpoint = r.endpoint!;
      try {
        if (this.#tunnels.status(endpoint) === undefined) await this.#tunnels.add(endpoint);
        else this.#tunnels.reconnect(endpoint);
      } catch (err) {
        // Owned now: the health pass adds the tunnel again (tunnels retry by themselves).
        this.#logger?.warn({ deviceId: r.id, err: message(err) }, 'tunnel of a taken-over device failed');
      }
    }
  }

  /**
   * May this node take the device over: a tunnel it was configured with itself, or one registered
   * through the API (for the whole fleet) that this node's tunnel allowlist permits.
   */
  async #canReach(record: DeviceRecord): Promise<boolean> {
    const endpoint = record.endpoint;
    if (endpoint === undefined) return false;
    if (this.#reachable.has(endpoint)) return true;
    if (record.source !== 'api') return false;
    return this.#policy.check(endpoint).then(
      () => true,
      () => false,
    );
  }

  /**
   * Remember the records this node owns; put back every record it drives (its tunnel is still here)
   * that the store no longer has. Resolves the owned records, the put-back ones included.
   */
  async #republish(all: DeviceRecord[]): Promise<DeviceRecord[]> {
    const seen = new Set(all.map((r) => r.id));
    const owned = all.filter((r) => r.ownerNode === this.#node);
    for (const r of all) {
      if (r.ownerNode === this.#node) this.#driven.set(r.id, r);
      else this.#driven.delete(r.id);
    }
    for (const [id, record] of this.#driven) {
      if (seen.has(id)) continue;
      if (record.endpoint !== undefined && this.#tunnels.status(record.endpoint) === undefined) {
        this.#driven.delete(id);
        continue;
      }
      const back = { ...record, updatedAt: this.#now() };
      await this.#put(back);
      const baseline = this.#baselineCopies.get(id);
      if (baseline !== undefined && (await this.#store.getBaseline(id)) === null) {
        await this.#store.putBaseline(id, baseline);
      }
      this.#logger?.warn({ deviceId: id }, 'device record missing from the store: re-published');
      owned.push(back);
    }
    return owned;
  }

  async #checkOne(record: DeviceRecord, adb: Map<string, string> | null): Promise<void> {
    try {
      const endpoint = record.endpoint;
      const tunnel = endpoint === undefined ? undefined : this.#tunnels.status(endpoint);
      const action = tunnelAction(record, tunnel !== undefined, adb);
      // Not tracked on this node (restart): re-connect in the background, tunnels retry by themselves.
      if (action === 'add') this.#tunnels.add(endpoint!).catch(() => undefined);
      if (action === 'reconnect') this.#tunnels.reconnect(endpoint!);
      const event = await healthEvent(record, adb, tunnel?.state, () =>
        probeDevice(this.#client, record.serial, this.#probeTimeout),
      );
      if (event.type !== 'observed') return;
      await this.#apply(record, event.observed, {
        count: event.count,
        ...(event.failure === undefined ? {} : { failure: event.failure }),
      });
      // Offline before and still (no state change to start them): quick checks from here.
      if (event.observed === 'offline') this.#recheckSoon(record.id);
      if (event.observed === 'online' && record.baseline === undefined) {
        const now = await this.#store.get(record.id);
        if (now?.state === 'online') await this.#baselineIfMissing(now);
      }
    } catch (err) {
      this.#logger?.warn({ deviceId: record.id, err: message(err) }, 'device health check failed');
    }
  }
}
