/**
 * Connection-level faults as the real adb server sees them: unauthorized / --require-auth,
 * drop after N bytes, latency, bandwidth cap, going offline (and coming back).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatedDevice, type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { type AdbServer, startAdbServer } from './support/adb-server.ts';

let server: AdbServer;
const simulators: Simulator[] = [];

async function device(options: Parameters<typeof startSimulator>[0] = {}): Promise<SimulatedDevice> {
  const sim = await startSimulator({ port: 0, ...options });
  simulators.push(sim);
  return sim.devices[0]!;
}

beforeAll(async () => {
  server = await startAdbServer();
});

afterEach(async () => {
  for (const sim of simulators.splice(0)) {
    for (const d of sim.devices) await server.adb(['disconnect', d.address]);
    await sim.close();
  }
});

afterAll(async () => {
  await server?.stop();
});

describe('connection faults through the real adb server', () => {
  it('unauthorized: adb lists the device as unauthorized and refuses commands', async () => {
    const d = await device({ faults: { unauthorized: true } });
    await server.connect(d.address, 'unauthorized');
    const shell = await server.adb(['-s', d.serial, 'shell', 'echo hi']);
    expect(shell.code).not.toBe(0);
    expect(shell.stderr).toContain('unauthorized');
  });

  it('--require-auth leaves every device unauthorized', async () => {
    const d = await device({ requireAuth: true });
    await server.connect(d.address, 'unauthorized');
    expect((await server.devices()).get(d.serial)).toBe('unauthorized');
  });

  it('drop-after-bytes cuts the transfer and the connection', async () => {
    const d = await device();
    d.android.fs.writeFile('/data/local/tmp/big.bin', randomBytes(1024 * 1024));
    await server.connect(d.address);
    expect(d.connectionCount).toBe(1);
    // Counted from the start of the connection (the CNXN banner took a few hundred bytes).
    d.setFaults({ dropAfterBytes: 64 * 1024 });
    const out = await server.adb(['-s', d.serial, 'exec-out', 'cat /data/local/tmp/big.bin'], {
      timeoutMs: 10_000,
    });
    expect(out.stdout.length).toBeLessThan(64 * 1024);
    // The transport went away under adb; with the fault lifted it works again.
    d.setFaults({});
    await server.adb(['disconnect', d.address]);
    await server.connect(d.address);
    const again = await server.adb(['-s', d.serial, 'exec-out', 'cat /data/local/tmp/big.bin']);
    expect(again.stdout.length).toBe(1024 * 1024);
  });

  // How long the latency and bandwidth faults hold the device's output is measured in
  // test/bench/simulator-faults.bench.ts; here: that they act on it, and the bytes still arrive whole.
  it('latency-ms holds every message the device sends while set, and the answer still arrives', async () => {
    const d = await device();
    await server.connect(d.address);
    expect((await server.adb(['-s', d.serial, 'shell', 'echo hi'])).stdout.toString()).toBe('hi\n');
    expect(d.faultEffects.delayedMessages).toBe(0);

    d.setFaults({ latencyMs: 150 });
    const slow = await server.adb(['-s', d.serial, 'shell', 'echo hi']);
    expect(slow.stdout.toString()).toBe('hi\n');
    // The stream's OKAY, its WRTE and its CLSE at least were each held before leaving.
    const held = d.faultEffects.delayedMessages;
    expect(held).toBeGreaterThanOrEqual(3);

    d.clearFault('latencyMs');
    expect((await server.adb(['-s', d.serial, 'shell', 'echo hi'])).stdout.toString()).toBe('hi\n');
    expect(d.faultEffects.delayedMessages).toBe(held);
  });

  it('bandwidth paces every byte the device sends, and the transfer arrives whole', async () => {
    const d = await device();
    const data = randomBytes(512 * 1024);
    d.android.fs.writeFile('/data/local/tmp/half.bin', data);
    await server.connect(d.address);
    expect(d.faultEffects.pacedBytes).toBe(0);
    d.setFaults({ bandwidthBytesPerSec: 1024 * 1024 });
    const pull = await server.adb(['-s', d.serial, 'exec-out', 'cat /data/local/tmp/half.bin']);
    expect(pull.stdout.equals(data)).toBe(true);
    // The file plus the adb framing around it went out through the pacing.
    expect(d.faultEffects.pacedBytes).toBeGreaterThan(data.length);
  });

  it('offline-after-ms: the device goes offline, and comes back when the fault is lifted', async () => {
    const d = await device({ faults: { offlineAfterMs: 300 } });
    await server.connect(d.address);
    await server.waitForState(d.serial, 'offline', 5000);
    expect(d.offline).toBe(true);
    const shell = await server.adb(['-s', d.serial, 'shell', 'echo hi'], { timeoutMs: 10_000 });
    expect(shell.code).not.toBe(0);
    expect(shell.stderr).toContain('offline');
    d.setFaults({});
    await server.waitForState(d.serial, 'device', 10_000);
    expect((await server.adb(['-s', d.serial, 'shell', 'echo back'])).stdout.toString()).toBe('back\n');
  });
});
