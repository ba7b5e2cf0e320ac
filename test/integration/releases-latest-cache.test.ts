/**
 * The repository's `latest` pointer cache on the filesystem store: a snapshot no longer reads the
 * pointer per call, a publish in this process is seen at once, a publish by another node over the
 * same data dir within the documented time.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import type { ArtifactStore } from '../../src/artifacts/store.ts';
import { latestKey } from '../../src/releases/layout.ts';
import { publishRelease } from '../../src/releases/publish.ts';
import { LATEST_POINTER_TTL_MS, ReleaseRepository } from '../../src/releases/repository.ts';
import { fixture, tempDir } from '../support/bridge.ts';

const NAME = 'android-snapshot-helper';
let tmp: { dir: string; cleanup(): Promise<void> };
let store: FsArtifactStore;
let other: FsArtifactStore;

beforeEach(async () => {
  tmp = await tempDir();
  store = new FsArtifactStore(path.join(tmp.dir, 'artifacts'));
  // Another node (or a `release publish` process) over the same data dir: its own store object.
  other = new FsArtifactStore(path.join(tmp.dir, 'artifacts'));
  await publishRelease(store, { apkPath: fixture('snapshot-helper-v1.apk'), version: '0.1.0' });
});
afterEach(async () => {
  await store.close();
  await other.close();
  await tmp.cleanup();
});

/**
 * `store` itself (the same object: publishes through it are this node's) with its reads of the `latest`
 * pointer counted, and optionally held after reading until released.
 */
function counted(inner: ArtifactStore): {
  store: ArtifactStore;
  reads: () => number;
  /** Hold the next read of the pointer after it read the bytes; `reached` once it waits there. */
  hold: () => { release: () => void; reached: Promise<void> };
} {
  let reads = 0;
  let gate: Promise<void> | null = null;
  let arrived: (() => void) | null = null;
  const get = inner.get.bind(inner);
  inner.get = async (key: string) => {
    if (key !== latestKey(NAME)) return get(key);
    reads++;
    const held = gate; // only the next read is held
    const reached = arrived;
    gate = null;
    arrived = null;
    const bytes = await get(key);
    reached?.();
    if (held !== null) await held;
    return bytes;
  };
  return {
    store: inner,
    reads: () => reads,
    hold: () => {
      let release!: () => void;
      gate = new Promise((r) => {
        release = r;
      });
      const reached = new Promise<void>((r) => {
        arrived = r;
      });
      return { release, reached };
    },
  };
}

describe('latest pointer cache', () => {
  it('serves repeated calls from memory: one store read for a burst of snapshots', async () => {
    const c = counted(store);
    const repo = new ReleaseRepository(c.store);
    for (let i = 0; i < 50; i++) expect(await repo.getLatestVersion(NAME)).toBe('0.1.0');
    expect(c.reads()).toBe(1);
    expect((await repo.getLatestManifest(NAME))?.version).toBe('0.1.0');
    expect(c.reads()).toBe(1);
  });

  it('concurrent calls while the pointer is read share that one read', async () => {
    const c = counted(store);
    const repo = new ReleaseRepository(c.store);
    const answers = await Promise.all(Array.from({ length: 8 }, () => repo.getLatestVersion(NAME)));
    expect(answers).toEqual(Array(8).fill('0.1.0'));
    expect(c.reads()).toBe(1);
  });

  it('a publish in this process is seen at once, whichever code published through the store', async () => {
    const repo = new ReleaseRepository(store, { latestTtlMs: 60_000 });
    expect(await repo.getLatestVersion(NAME)).toBe('0.1.0');
    await publishRelease(store, { apkPath: fixture('snapshot-helper-v2.apk'), version: '0.2.0' });
    expect(await repo.getLatestVersion(NAME)).toBe('0.2.0');
    expect((await repo.getLatestManifest(NAME))?.version).toBe('0.2.0');
  });

  it('a publish by another node over the same data dir is seen once the TTL has passed, not before', async () => {
    const ttl = 3000;
    // Only the clock the cache reads is faked: the publish's file I/O runs for real, however long.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const repo = new ReleaseRepository(store, { latestTtlMs: ttl });
      expect(await repo.getLatestVersion(NAME)).toBe('0.1.0');
      await publishRelease(other, { apkPath: fixture('snapshot-helper-v2.apk'), version: '0.2.0' });
      // Still the cached pointer within the TTL of the cached read (the documented staleness)...
      expect(await repo.getLatestVersion(NAME)).toBe('0.1.0');
      vi.advanceTimersByTime(ttl - 1);
      expect(await repo.getLatestVersion(NAME)).toBe('0.1.0');
      // ...and the new one once the TTL since the cached read has passed.
      vi.advanceTimersByTime(1);
      expect(await repo.getLatestVersion(NAME)).toBe('0.2.0');
    } finally {
      vi.useRealTimers();
    }
    expect(LATEST_POINTER_TTL_MS).toBeLessThanOrEqual(1000);
  });

  it('a read in flight while a publish here moves the pointer is not kept', async () => {
    const c = counted(store);
    const repo = new ReleaseRepository(c.store, { latestTtlMs: 60_000 });
    const { release, reached } = c.hold();
    const inFlight = repo.getLatestVersion(NAME);
    await reached; // it read 0.1.0 and waits at the gate
    // Published through the same store object the node serves from (what the publish route does).
    await publishRelease(c.store, { apkPath: fixture('snapshot-helper-v2.apk'), version: '0.2.0' });
    release();
    expect(await inFlight).toBe('0.1.0');
    expect(await repo.getLatestVersion(NAME)).toBe('0.2.0');
  });

  it('a corrupt pointer is an error every time, never cached', async () => {
    const repo = new ReleaseRepository(store, { latestTtlMs: 60_000 });
    await store.put(latestKey(NAME), 'not json');
    await expect(repo.getLatestVersion(NAME)).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(repo.getLatestVersion(NAME)).rejects.toMatchObject({ code: 'INTERNAL' });
  });
});

describe('version manifests', () => {
  it('are read once and shared frozen: a caller cannot change what the next one gets', async () => {
    const repo = new ReleaseRepository(store);
    const first = await repo.getLatestManifest(NAME);
    const second = await repo.getLatestManifest(NAME);
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { version: string }).version = '9.9.9';
    }).toThrow(TypeError);
    expect(() => (first!.installArgs as string[]).push('-g')).toThrow(TypeError);
    const again = await repo.getRelease(NAME, '0.1.0');
    expect(again).toMatchObject({ version: '0.1.0' });
    expect(again!.installArgs).not.toContain('-g');
  });
});
