/**
 * The registry's `health-pass` event (what the node's devicebridge_device_health_passes_total
 * counts): one per completed pass, none for a pass that failed. The adb client and tunnels are
 * stand-ins for our own interfaces; the store is the memory store.
 */
import { describe, expect, it } from 'vitest';
import type { AdbClient } from '../../src/adb/client.ts';
import type { TunnelManager } from '../../src/adb/tunnels.ts';
import { EndpointPolicy } from '../../src/devices/endpoint-policy.ts';
import { MemoryDeviceStore } from '../../src/devices/memory-store.ts';
import { DeviceRegistry } from '../../src/devices/registry.ts';
import { createMetrics } from '../../src/observability/metrics.ts';

function registry(store = new MemoryDeviceStore()): DeviceRegistry {
  return new DeviceRegistry({
    store,
    client: { devices: async () => [] } as unknown as AdbClient,
    tunnels: { status: () => undefined } as unknown as TunnelManager,
    policy: new EndpointPolicy(),
    node: 'node-a',
  });
}

describe('health passes', () => {
  it('emits health-pass once per completed pass', async () => {
    const r = registry();
    let passes = 0;
    r.on('health-pass', () => {
      passes += 1;
    });
    await r.checkHealth();
    expect(passes).toBe(1);
    await r.checkHealth();
    expect(passes).toBe(2);
  });

  it('a pass that fails emits nothing', async () => {
    const store = new MemoryDeviceStore();
    store.list = async () => {
      throw new Error('store down');
    };
    const r = registry(store);
    let passes = 0;
    r.on('health-pass', () => {
      passes += 1;
    });
    await expect(r.checkHealth()).rejects.toThrow('store down');
    expect(passes).toBe(0);
  });

  it('the metric counts passes under its documented name', async () => {
    const metrics = createMetrics();
    metrics.healthPasses.inc();
    metrics.healthPasses.inc();
    expect(await metrics.registry.metrics()).toMatch(/^devicebridge_device_health_passes_total 2$/m);
  });
});

describe('a removal while a health pass is in flight', () => {
  it('sticks: the pass that listed the device before the removal neither reconnects nor re-publishes it', async () => {
    const store = new MemoryDeviceStore();
    const endpoint = '127.0.0.1:5555';
    const now = Date.now();
    await store.put({
      id: '127.0.0.1-5555',
      serial: endpoint,
      endpoint,
      labels: {},
      state: 'online',
      properties: {},
      helpers: {},
      source: 'config',
      ownerNode: 'node-a',
      consecutiveFailures: 0,
      createdAt: now,
      updatedAt: now,
    });
    const tunnels = new Set([endpoint]);
    let holdList: Promise<void> | null = null;
    let listed: () => void = () => undefined;
    const list = store.list.bind(store);
    store.list = async () => {
      const records = await list();
      if (holdList !== null) {
        listed();
        await holdList;
      }
      return records;
    };
    const r = new DeviceRegistry({
      store,
      client: { devices: async () => [{ serial: endpoint, state: 'device' }] } as unknown as AdbClient,
      tunnels: {
        status: (e: string) => (tunnels.has(e) ? { state: 'connected' } : undefined),
        add: async (e: string) => void tunnels.add(e),
        remove: async (e: string) => void tunnels.delete(e),
        reconnect: () => undefined,
      } as unknown as TunnelManager,
      policy: new EndpointPolicy(),
      node: 'node-a',
    });
    let release: () => void = () => undefined;
    holdList = new Promise<void>((resolve) => {
      release = resolve;
    });
    const wasListed = new Promise<void>((resolve) => {
      listed = resolve;
    });
    const pass = r.checkHealth();
    await wasListed;
    holdList = null;
    await r.remove('127.0.0.1-5555');
    release();
    await pass;
    await r.checkHealth();
    await r.checkHealth();
    expect(await store.get('127.0.0.1-5555')).toBeNull();
    expect([...tunnels]).toEqual([]);
  });
});
