/**
 * Device store on Redis (ioredis), shared by every bridge node.
 *
 * Keys (all carry the `{devicebridge}` hash tag, so they share one Redis Cluster slot and the
 * multi-key scripts in `lua/` are legal on a cluster):
 *   <prefix>{devicebridge}:device:<id>   JSON of the DeviceRecord
 *   <prefix>{devicebridge}:devices       set of ids (the index)
 *   <prefix>{devicebridge}:baseline:<id> JSON of the device's baseline (the reset between tenants)
 *   <prefix>{devicebridge}:generation    JSON of the store's generation (see StoreGeneration): gone
 *                                        with the data when Redis loses it, made again by a reader
 *   <prefix>{devicebridge}:node:<name>   JSON {"url"} with a TTL refreshed by the node's heartbeat
 *                                        (the node directory: present = alive)
 *
 * `update` is optimistic compare-and-set: read the JSON, apply `change` in JS, then one Lua script
 * (`lua/compare-and-set.lua`) writes the new JSON only if the stored JSON is still byte-identical
 * to what was read; otherwise it re-reads and retries. No WATCH, so one connection serves
 * concurrent callers.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { BridgeError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { closeRedis, openRedis } from '../redis/connection.ts';
import { KeySpace } from '../redis/keys.ts';
import { ScriptSet } from '../redis/script-loader.ts';
import { decodeStored, isStoredRecordError } from '../stored-record.ts';
import type { DeviceBaseline } from './baseline.ts';
import { NODE_STALE_MS, type NodeDirectory, parseNodeEntry } from './nodes.ts';
import { checkUpdatedRecord, compareIds, decodeBaseline } from './store-common.ts';
import { StoredDeviceRecord, StoredGeneration as StoredGenerationSchema } from './stored-records.ts';
import type { DeviceRecord, DeviceStore, StoreGeneration } from './types.ts';

export const DEVICE_HASH_TAG = '{devicebridge}';

/** Where the device scripts live (kept beside this module, also in a built package). */
export const DEVICE_SCRIPT_DIR = new URL('./lua/', import.meta.url);
export const DEVICE_SCRIPT_NAMES = ['put', 'compare-and-set', 'delete'] as const;
type DeviceScriptName = (typeof DEVICE_SCRIPT_NAMES)[number];

/** Every key of the device store and the node directory, built in one place. */
export class DeviceKeys {
  readonly #space: KeySpace;

  constructor(prefix: string) {
    this.#space = new KeySpace(prefix, DEVICE_HASH_TAG);
  }
  record(id: string): string {
    return this.#space.key('device', id);
  }
  get index(): string {
    return this.#space.key('devices');
  }
  baseline(id: string): string {
    return this.#space.key('baseline', id);
  }
  node(name: string): string {
    return this.#space.key('node', name);
  }
  get generation(): string {
    return this.#space.key('generation');
  }
}

/** Every connection of this file retries a command at most 3 times while Redis is unreachable. */
function openDeviceRedis(role: string, url: string | undefined, logger: Logger | undefined): Redis {
  return openRedis({ url, role, logger, options: { maxRetriesPerRequest: 3 } });
}

export interface RedisDeviceStoreOptions {
  /** `redis://…` (default `redis://127.0.0.1:6379`); ignored when `client` is given. */
  url?: string;
  /** A connection owned by the caller (not closed by `close()`). */
  client?: Redis;
  /** Key prefix (e.g. a random per-test namespace); must not contain `{` or `}`. */
  prefix?: string;
  /** Compare-and-set attempts before `update` gives up with CONFLICT (default 100). */
  maxUpdateAttempts?: number;
  /** Where connection errors of an owned connection, and records `list` skips, are logged. */
  logger?: Logger;
}

/** Parse a stored record: a StoredRecordError (INTERNAL) naming its key and first bad field. */
export function decodeDeviceRecord(key: string, json: string): DeviceRecord {
  return decodeStored(StoredDeviceRecord, json, { kind: 'device record', key }) as DeviceRecord;
}

export class RedisDeviceStore implements DeviceStore {
  readonly #redis: Redis;
  readonly #owned: boolean;
  readonly #keys: DeviceKeys;
  readonly #scripts: ScriptSet<DeviceScriptName>;
  readonly #maxAttempts: number;
  readonly #logger: Logger | undefined;

  constructor(options: RedisDeviceStoreOptions = {}) {
    this.#logger = options.logger;
    this.#keys = new DeviceKeys(options.prefix ?? '');
    this.#owned = options.client === undefined;
    this.#redis = options.client ?? openDeviceRedis('devices', options.url, options.logger);
    this.#scripts = new ScriptSet(this.#redis, {
      dir: DEVICE_SCRIPT_DIR,
      names: DEVICE_SCRIPT_NAMES,
    });
    this.#maxAttempts = options.maxUpdateAttempts ?? 100;
  }

  /** The key of one device's record. */
  recordKey(id: string): string {
    return this.#keys.record(id);
  }

  /** The key of the id index. */
  get indexKey(): string {
    return this.#keys.index;
  }

  async list(): Promise<DeviceRecord[]> {
    const ids = (await this.#redis.smembers(this.indexKey)).sort(compareIds);
    if (ids.length === 0) return [];
    const keys = ids.map((id) => this.recordKey(id));
    const values = await this.#redis.mget(...keys);
    const out: DeviceRecord[] = [];
    values.forEach((json, i) => {
      if (json === null) return;
      // One record that cannot be read is left out (and left as it is), not every device with it.
      try {
        out.push(decodeDeviceRecord(keys[i]!, json));
      } catch (err) {
        if (!isStoredRecordError(err)) throw err;
        this.#logger?.warn(
          { deviceId: ids[i], field: err.field, err: err.message },
          'device store: list skipped a record it cannot read',
        );
      }
    });
    return out;
  }

  async get(id: string): Promise<DeviceRecord | null> {
    const key = this.recordKey(id);
    const json = await this.#redis.get(key);
    return json === null ? null : decodeDeviceRecord(key, json);
  }

  async put(record: DeviceRecord): Promise<void> {
    await this.#scripts.run(
      'put',
      [this.recordKey(record.id), this.indexKey],
      [record.id, JSON.stringify(record)],
    );
  }

  async update(id: string, change: (record: DeviceRecord) => DeviceRecord): Promise<DeviceRecord | null> {
    const key = this.recordKey(id);
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      const json = await this.#redis.get(key);
      if (json === null) return null;
      const next = checkUpdatedRecord(id, change(decodeDeviceRecord(key, json)));
      const written = Number(await this.#scripts.run('compare-and-set', [key], [json, JSON.stringify(next)]));
      if (written === 1) return next;
      if (written === -1) return null;
      // Lost a race: back off a little (jittered) once contention persists, then re-read.
      if (attempt >= 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
    }
    throw new BridgeError('CONFLICT', `device ${id}: too many concurrent updates, try again`, {
      details: { deviceId: id },
    });
  }

  async delete(id: string): Promise<boolean> {
    const deleted = await this.#scripts.run(
      'delete',
      [this.recordKey(id), this.indexKey, this.#keys.baseline(id)],
      [id],
    );
    return deleted === 1;
  }

  async getBaseline(id: string): Promise<DeviceBaseline | null> {
    const key = this.#keys.baseline(id);
    const json = await this.#redis.get(key);
    return json === null ? null : decodeBaseline(json, key);
  }

  async putBaseline(id: string, baseline: DeviceBaseline): Promise<void> {
    await this.#redis.set(this.#keys.baseline(id), JSON.stringify(baseline));
  }

  async generation(known?: string): Promise<StoreGeneration> {
    const key = this.#keys.generation;
    const stored = await this.#redis.get(key);
    if (stored !== null) return decodeGeneration(key, stored);
    const made: StoreGeneration = { id: randomUUID(), since: Date.now(), afterLoss: known !== undefined };
    if ((await this.#redis.set(key, JSON.stringify(made), 'NX')) === 'OK') return made;
    // Another reader made it first.
    const theirs = await this.#redis.get(key);
    if (theirs === null)
      throw new BridgeError('UNAVAILABLE', 'device store generation vanished while read', {
        retryable: true,
      });
    return decodeGeneration(key, theirs);
  }

  async close(): Promise<void> {
    if (this.#owned) await closeRedis(this.#redis);
  }
}

/** Parse a stored generation: a StoredRecordError (INTERNAL) when it is not the JSON `generation` writes. */
function decodeGeneration(key: string, json: string): StoreGeneration {
  return decodeStored(StoredGenerationSchema, json, { kind: 'device store generation', key });
}

export interface RedisNodeDirectoryOptions {
  /** `redis://…` (default `redis://127.0.0.1:6379`); ignored when `client` is given. */
  url?: string;
  /**
   * A connection owned by the caller (not closed by `close()`), for the lookups and, unless
   * `heartbeatClient` is given, the heartbeat too.
   */
  client?: Redis;
  /** A connection owned by the caller for the heartbeat's writes (`announce`, `remove`). */
  heartbeatClient?: Redis;
  /** Key prefix, default `devicebridge:`; must not contain `{` or `}`. */
  prefix?: string;
  /** Where connection errors of an owned connection are logged. */
  logger?: Logger;
}

/**
 * The node directory on Redis: one key per node, `<prefix>{devicebridge}:node:<name>` = `{"url"}`,
 * written with a TTL by every heartbeat (so liveness is judged on Redis's clock, not on the nodes'),
 * deleted by a clean shutdown. Single-key operations only.
 *
 * Two connections: the lookups (`urlOf`, `alive`: one per forwarded call, any number at once) and
 * the heartbeat's writes (`announce`, `remove`), so a burst of lookups queued on their connection,
 * or one stuck there, cannot delay a beat past the entry's TTL (and the node would read as dead).
 */
export class RedisNodeDirectory implements NodeDirectory {
  readonly #lookups: Redis;
  readonly #heartbeat: Redis;
  /** The connections this directory opened (closed by `close()`). */
  readonly #owned: Redis[] = [];
  readonly #keys: DeviceKeys;

  constructor(options: RedisNodeDirectoryOptions = {}) {
    const open = (role: string) => {
      const client = openDeviceRedis(role, options.url, options.logger);
      this.#owned.push(client);
      return client;
    };
    this.#lookups = options.client ?? open('nodes');
    this.#heartbeat = options.heartbeatClient ?? options.client ?? open('node heartbeat');
    this.#keys = new DeviceKeys(options.prefix ?? 'devicebridge:');
  }

  async announce(node: string, url: string | null, ttlMs = NODE_STALE_MS): Promise<void> {
    await this.#heartbeat.set(
      this.#keys.node(node),
      JSON.stringify({ url }),
      'PX',
      Math.max(1, Math.round(ttlMs)),
    );
  }

  async urlOf(node: string): Promise<string | null> {
    const raw = await this.#lookups.get(this.#keys.node(node));
    return raw === null ? null : (parseNodeEntry(raw)?.url ?? null);
  }

  async alive(nodes: readonly string[]): Promise<Set<string>> {
    const names = [...new Set(nodes)];
    if (names.length === 0) return new Set();
    const values = await this.#lookups.mget(...names.map((n) => this.#keys.node(n)));
    return new Set(names.filter((_, i) => values[i] !== null && parseNodeEntry(values[i]!) !== null));
  }

  async remove(node: string): Promise<void> {
    await this.#heartbeat.del(this.#keys.node(node));
  }

  async close(): Promise<void> {
    await Promise.all(this.#owned.map((client) => closeRedis(client)));
  }
}
