import { describe, expect, it } from 'vitest';
import { MemoryDeviceStore } from '../../src/devices/memory-store.ts';
import type { DeviceRecord } from '../../src/devices/types.ts';

function record(id: string, patch: Partial<DeviceRecord> = {}): DeviceRecord {
  return {
    id,
    serial: id,
    labels: { pool: 'ci' },
    state: 'online',
    properties: { sdk: 34 },
    helpers: {},
    source: 'api',
    ownerNode: 'node-a',
    consecutiveFailures: 0,
    createdAt: 1,
    updatedAt: 1,
    ...patch,
  };
}

describe('MemoryDeviceStore', () => {
  it('put / get / list (sorted by id) / delete', async () => {
    const store = new MemoryDeviceStore();
    expect(await store.get('a')).toBeNull();
    await store.put(record('b'));
    await store.put(record('a', { state: 'offline' }));
    expect((await store.get('a'))?.state).toBe('offline');
    expect((await store.list()).map((r) => r.id)).toEqual(['a', 'b']);
    await store.put(record('a', { state: 'unauthorized' }));
    expect((await store.get('a'))?.state).toBe('unauthorized');
    expect(await store.delete('a')).toBe(true);
    expect(await store.delete('a')).toBe(false);
    expect((await store.list()).map((r) => r.id)).toEqual(['b']);
    await store.close();
  });

  it('copies records in and out: callers cannot mutate the store', async () => {
    const store = new MemoryDeviceStore();
    const r = record('a');
    await store.put(r);
    r.labels['pool'] = 'changed';
    const got = await store.get('a');
    expect(got?.labels['pool']).toBe('ci');
    got!.state = 'offline';
    (await store.list())[0]!.properties.sdk = 1;
    expect(await store.get('a')).toEqual(record('a'));
  });

  it('update is read-modify-write; null when absent; refuses an id change', async () => {
    const store = new MemoryDeviceStore();
    expect(await store.update('nope', (r) => r)).toBeNull();
    await store.put(record('a'));
    await Promise.all(
      Array.from({ length: 50 }, () =>
        store.update('a', (r) => ({ ...r, consecutiveFailures: r.consecutiveFailures + 1 })),
      ),
    );
    expect((await store.get('a'))?.consecutiveFailures).toBe(50);
    await expect(store.update('a', (r) => ({ ...r, id: 'b' }))).rejects.toThrow(/must not change its id/);
    expect(await store.get('b')).toBeNull();
  });
});
