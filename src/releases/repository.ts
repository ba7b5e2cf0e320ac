/**
 * Read side of published releases over an ArtifactStore (see layout.ts). Every manifest read back
 * from a store is validated again: a store is outside input too.
 *
 * `getRelease` / `getLatestRelease` return a manifest of any kind (what the manifest routes serve);
 * `getManifest` / `getLatestManifest` are for callers that install and instrument an APK (ensure,
 * snapshot) and refuse a helper of another kind with a clear error.
 */
import { z } from 'zod';
import type { ArtifactStore } from '../artifacts/store.ts';
import { BridgeError, isBridgeError } from '../errors.ts';
import {
  compareSemver,
  type HelperManifest,
  isSemver,
  type ReleaseManifest,
  validateReleaseManifest,
} from '../manifest/index.ts';
import { decodeStored } from '../stored-record.ts';
import { parseStrictJson } from '../strict-json.ts';
import { helpersPrefix, latestKey, manifestKey, versionPrefix } from './layout.ts';

export interface HelperSummary {
  name: string;
  latest: string | null;
  versions: string[];
}

/** Freeze `value` and everything in it (a manifest: plain objects, arrays, strings, numbers). */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** How many validated version manifests a repository keeps (a version's manifest never changes). */
const MANIFEST_CACHE_ENTRIES = 1024;

/**
 * How long a `latest` pointer read from the store is served from memory. A publish through any code of
 * this process onto the same store object is seen at once (`latestMoved`); a publish by another node
 * or process (shared S3 bucket, shared data dir) is seen within this time of its completion.
 */
export const LATEST_POINTER_TTL_MS = 1000;

/**
 * Per store object: a count of the `latest` moves made through it in this process. A repository
 * compares it with the count its cached pointers were read under, so a publish here invalidates them
 * at once whichever repository object (or none) published.
 */
const latestMoves = new WeakMap<ArtifactStore, number>();

/** Record that the `latest` pointer of some helper on `store` moved (publish.ts, after its swap). */
export function latestMoved(store: ArtifactStore): void {
  latestMoves.set(store, (latestMoves.get(store) ?? 0) + 1);
}

interface CachedPointer {
  /** The read (in flight or done); a failed one is dropped from the cache. */
  version: Promise<string | null>;
  /** When the read that produced it started (performance.now()). */
  readAt: number;
  /** The store's move count the read started under. */
  moves: number;
}

export class ReleaseRepository {
  readonly #store: ArtifactStore;
  /**
   * Validated manifests by name and version. A published version is immutable (publishing the same
   * version with other bytes is refused), so once read and validated it is served from here: a snapshot
   * reads only the small `latest` pointer. Never-published versions are not remembered.
   */
  readonly #manifests = new Map<string, ReleaseManifest>();
  /** `latest` pointers by helper name (see LATEST_POINTER_TTL_MS); a corrupt pointer is never cached. */
  readonly #latest = new Map<string, CachedPointer>();
  readonly #latestTtlMs: number;

  constructor(store: ArtifactStore, options: { latestTtlMs?: number } = {}) {
    this.#store = store;
    this.#latestTtlMs = options.latestTtlMs ?? LATEST_POINTER_TTL_MS;
  }

  get store(): ArtifactStore {
    return this.#store;
  }

  /**
   * The manifest (any kind) of one version, or null when that version was never published. Deeply
   * frozen and shared by every caller (no copy per call): a caller that wants another shape spreads it.
   */
  async getRelease(name: string, version: string): Promise<ReleaseManifest | null> {
    const key = `${name}\n${version}`;
    const cached = this.#manifests.get(key);
    if (cached !== undefined) return cached;
    const bytes = await this.#store.get(manifestKey(name, version));
    if (bytes === null) return null;
    const manifest = deepFreeze(parseStoredManifest(bytes, `${name} ${version}`));
    if (this.#manifests.size >= MANIFEST_CACHE_ENTRIES) this.#manifests.clear();
    this.#manifests.set(key, manifest);
    return manifest;
  }

  /** The manifest of one version of an instrumentation-APK helper, or null when never published. */
  async getManifest(name: string, version: string): Promise<HelperManifest | null> {
    const manifest = await this.getRelease(name, version);
    return manifest === null ? null : instrumentationApk(manifest);
  }

  /**
   * The version the `latest` pointer names, or null when nothing was published. Served from memory for
   * up to LATEST_POINTER_TTL_MS after a read began, unless a publish in this process moved a pointer of
   * this store since (then read again at once).
   */
  getLatestVersion(name: string): Promise<string | null> {
    const moves = latestMoves.get(this.#store) ?? 0;
    const now = performance.now();
    const cached = this.#latest.get(name);
    if (cached !== undefined && cached.moves === moves && now - cached.readAt < this.#latestTtlMs) {
      return cached.version;
    }
    const version = this.#store
      .get(latestKey(name))
      .then((bytes) => (bytes === null ? null : parseLatestPointer(bytes, name)));
    if (this.#latestTtlMs > 0) {
      // Calls arriving while the read is in flight share it. Kept under the move count it began with:
      // a publish here that completes meanwhile moves the count, so later calls read again.
      if (this.#latest.size >= MANIFEST_CACHE_ENTRIES) this.#latest.clear();
      const entry: CachedPointer = { version, readAt: now, moves };
      this.#latest.set(name, entry);
      version.catch(() => {
        if (this.#latest.get(name) === entry) this.#latest.delete(name);
      });
    }
    return version;
  }

  async getLatestRelease(name: string): Promise<ReleaseManifest | null> {
    const version = await this.getLatestVersion(name);
    return version === null ? null : this.getRelease(name, version);
  }

  async getLatestManifest(name: string): Promise<HelperManifest | null> {
    const manifest = await this.getLatestRelease(name);
    return manifest === null ? null : instrumentationApk(manifest);
  }

  async listVersions(name: string): Promise<string[]> {
    const prefix = versionPrefix(name);
    const versions = new Set<string>();
    for (const key of await this.#store.list(prefix)) {
      const rest = key.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash > 0 && rest.slice(slash + 1) === 'manifest.json') versions.add(rest.slice(0, slash));
    }
    return [...versions].sort(compareSemver);
  }

  async listHelpers(): Promise<HelperSummary[]> {
    const names = new Set<string>();
    for (const key of await this.#store.list(helpersPrefix)) {
      const name = key.slice(helpersPrefix.length).split('/')[0];
      if (name) names.add(name);
    }
    const out: HelperSummary[] = [];
    for (const name of [...names].sort()) {
      out.push({ name, latest: await this.getLatestVersion(name), versions: await this.listVersions(name) });
    }
    return out;
  }
}

/** The version a stored `latest.json` pointer names; INTERNAL when the pointer is corrupt. */
export function parseLatestPointer(bytes: Buffer, name: string): string {
  return decodeStored(StoredLatestPointer, bytes, { kind: 'latest pointer', key: name }, POINTER_LIMITS)
    .version;
}

/** A stored `latest.json`: `{"version"}`, a semver. */
const StoredLatestPointer = z.object({ version: z.string().refine(isSemver) });
const POINTER_LIMITS = { maxDepth: 2, maxBytes: 4096 };

/** The bytes of a `latest.json` pointer naming `version`. */
export function formatLatestPointer(version: string): string {
  return `${JSON.stringify({ version })}\n`;
}

/** The manifest as an instrumentation APK; INVALID_ARGUMENT naming the kind otherwise. */
export function instrumentationApk(manifest: ReleaseManifest): HelperManifest {
  if (manifest.kind === undefined || manifest.kind === 'instrumentation-apk') return manifest;
  const { kind } = manifest;
  throw new BridgeError(
    'INVALID_ARGUMENT',
    `helper ${manifest.name} ${manifest.version} is a ${kind} release, not an instrumentation APK`,
    { details: { name: manifest.name, version: manifest.version, kind } },
  );
}

export function parseStoredManifest(bytes: Buffer, what: string): ReleaseManifest {
  let raw: unknown;
  try {
    raw = parseStrictJson(bytes);
  } catch (err) {
    throw new BridgeError(
      'INTERNAL',
      `stored manifest of ${what} is not valid JSON: ${isBridgeError(err) ? err.message.replace(/^JSON: /, '') : 'unreadable'}`,
    );
  }
  const verdict = validateReleaseManifest(raw);
  if (!verdict.valid) {
    throw new BridgeError('INTERNAL', `stored manifest of ${what} is invalid`, {
      details: { errors: verdict.errors },
    });
  }
  return verdict.manifest;
}
