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
