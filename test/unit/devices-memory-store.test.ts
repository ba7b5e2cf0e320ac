import { describe, expect, it } from 'vitest';
import { MemoryDeviceStore } from '../../src/devices/memory-store.ts';
import { deviceRecord, deviceStoreContract } from '../support/device-store-contract.ts';

deviceStoreContract('memory', async () => new MemoryDeviceStore(), { modelRuns: 150 });

describe('MemoryDeviceStore specifics', () => {
  it('50 updates issued at once all land (change runs synchronously, nothing interleaves)', async () => {
    const store = new MemoryDeviceStore();
    await store.put(deviceRecord('a'));
    await Promise.all(
      Array.from({ length: 50 }, () =>
        store.update('a', (r) => ({ ...r, consecutiveFailures: r.consecutiveFailures + 1 })),
      ),
    );
    expect((await store.get('a'))?.consecutiveFailures).toBe(50);
  });
});
