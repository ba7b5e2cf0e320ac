/**
 * Device store on Redis (ioredis), shared by every bridge node.
 *
 * Keys (all carry the `{devicebridge}` hash tag, so they share one Redis Cluster slot and the
 * multi-key scripts below are legal on a cluster):
 *   <prefix>{devicebridge}:device:<id>   JSON of the DeviceRecord
 *   <prefix>{devicebridge}:devices       set of ids (the index)
 *
 * `update` is optimistic compare-and-set: read the JSON, apply `change` in JS, then one Lua script
 * writes the new JSON only if the stored JSON is still byte-identical to what was read; otherwise
 * it re-reads and retries. No WATCH, so one connection serves concurrent callers.
 */
import { Redis } from 'ioredis';
import { BridgeError } from '../errors.ts';
import { compareIds } from './memory-store.ts';
import { NODE_STALE_MS, type NodeDirectory } from './nodes.ts';
import type { DeviceRecord, DeviceStore } from './types.ts';

export const DEVICE_HASH_TAG = '{devicebridge}';

/**
 * KEYS[1] record key, KEYS[2] index set; ARGV[1] id, ARGV[2] record JSON.
 * Writes the record and adds the id to the index. Returns 1.
 */
const PUT_LUA = `
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
`;

/**
 * KEYS[1] record key; ARGV[1] the JSON the caller read, ARGV[2] the new JSON.
 * Returns 1 when written, 0 when the stored JSON changed meanwhile, -1 when the record is gone.
 */
const CAS_LUA = `
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`;

/**
 * KEYS[1] record key, KEYS[2] index set; ARGV[1] id.
 * Deletes the record and removes the id from the index. Returns the number of records deleted (0/1).
 */
const DELETE_LUA = `
local n = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return n
`;

interface DeviceCommands {
  devicebridgeDevicePut(record: string, index: string, id: string, json: string): Promise<number>;
  devicebridgeDeviceCas(record: string, expected: string, json: string): Promise<number>;
  devicebridgeDeviceDelete(record: string, index: string, id: string): Promise<number>;
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
}

export class RedisDeviceStore implements DeviceStore {
  readonly #redis: Redis & DeviceCommands;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #maxAttempts: number;

  constructor(options: RedisDeviceStoreOptions = {}) {
    const prefix = options.prefix ?? '';
    if (/[{}]/.test(prefix)) {
      throw new BridgeError(
        'INVALID_ARGUMENT',
        `redis key prefix ${JSON.stringify(prefix)} must not contain { or }`,
      );
    }
    this.#prefix = prefix;
    this.#owned = options.client === undefined;
    const redis =
      options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 3 });
    const commands = redis as unknown as Record<string, unknown>;
    if (typeof commands['devicebridgeDevicePut'] !== 'function') {
      redis.defineCommand('devicebridgeDevicePut', { numberOfKeys: 2, lua: PUT_LUA });
      redis.defineCommand('devicebridgeDeviceCas', { numberOfKeys: 1, lua: CAS_LUA });
      redis.defineCommand('devicebridgeDeviceDelete', { numberOfKeys: 2, lua: DELETE_LUA });
    }
    this.#redis = redis as Redis & DeviceCommands;
    this.#maxAttempts = options.maxUpdateAttempts ?? 100;
  }

  /** The key of one device's record. */
  recordKey(id: string): string {
    return `${this.#prefix}${DEVICE_HASH_TAG}:device:${id}`;
  }

  /** The key of the id index. */
  get indexKey(): string {
    return `${this.#prefix}${DEVICE_HASH_TAG}:devices`;
  }

  #decode(key: string, json: string): DeviceRecord {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      throw new BridgeError('INTERNAL', `device record at ${key} is not JSON`);
    }
    if (
      typeof value !== 'object' ||
      value === null ||
      typeof (value as DeviceRecord).id !== 'string' ||
      typeof (value as DeviceRecord).state !== 'string'
    ) {
      throw new BridgeError('INTERNAL', `device record at ${key} is not a device record`);
    }
    return value as DeviceRecord;
  }

  async list(): Promise<DeviceRecord[]> {
    const ids = (await this.#redis.smembers(this.indexKey)).sort(compareIds);
    if (ids.length === 0) return [];
    const keys = ids.map((id) => this.recordKey(id));
    const values = await this.#redis.mget(...keys);
    const out: DeviceRecord[] = [];
    values.forEach((json, i) => {
      if (json !== null) out.push(this.#decode(keys[i]!, json));
    });
    return out;
  }

  async get(id: string): Promise<DeviceRecord | null> {
    const key = this.recordKey(id);
    const json = await this.#redis.get(key);
    return json === null ? null : this.#decode(key, json);
  }

  async put(record: DeviceRecord): Promise<void> {
    await this.#redis.devicebridgeDevicePut(
      this.recordKey(record.id),
      this.indexKey,
      record.id,
      JSON.stringify(record),
    );
  }

  async update(id: string, change: (record: DeviceRecord) => DeviceRecord): Promise<DeviceRecord | null> {
    const key = this.recordKey(id);
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      const json = await this.#redis.get(key);
      if (json === null) return null;
      const next = change(this.#decode(key, json));
      if (next.id !== id) {
        throw new BridgeError('INTERNAL', `update of device ${id} must not change its id (got ${next.id})`);
      }
      const written = await this.#redis.devicebridgeDeviceCas(key, json, JSON.stringify(next));
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
    return (await this.#redis.devicebridgeDeviceDelete(this.recordKey(id), this.indexKey, id)) === 1;
  }

  async close(): Promise<void> {
    if (this.#owned) await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

/**
 * The node directory on Redis: one hash `<prefix>{devicebridge}:nodes` of node → `{"url","at"}`.
 * Single-key operations only; a stale entry is ignored by readers (and replaced by the next beat).
 */
export class RedisNodeDirectory implements NodeDirectory {
  readonly #client: Redis;
  readonly #owned: boolean;
  readonly #key: string;
  readonly #now: () => number;

  constructor(options: { url?: string; client?: Redis; prefix?: string; now?: () => number } = {}) {
    this.#owned = options.client === undefined;
    this.#client =
      options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 3 });
    this.#key = `${options.prefix ?? 'devicebridge:'}${DEVICE_HASH_TAG}:nodes`;
    this.#now = options.now ?? Date.now;
  }

  async announce(node: string, url: string): Promise<void> {
    await this.#client.hset(this.#key, node, JSON.stringify({ url, at: this.#now() }));
  }

  async urlOf(node: string): Promise<string | null> {
    const raw = await this.#client.hget(this.#key, node);
    if (raw === null) return null;
    try {
      const entry = JSON.parse(raw) as { url?: unknown; at?: unknown };
      if (typeof entry.url !== 'string' || typeof entry.at !== 'number') return null;
      return this.#now() - entry.at < NODE_STALE_MS ? entry.url : null;
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    if (this.#owned) await this.#client.quit().catch(() => undefined);
  }
}
