/**
 * Faults switched at run time, as the real adb server sees them: in-process (cable pull, stall,
 * unauthorized on a live device) and through `devicebridge simulate --control-port`.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimulatedDevice, type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { type AdbServer, startAdbServer } from './support/adb-server.ts';

const BIN = new URL('../../src/cli/bin.js', import.meta.url).pathname;
let server: AdbServer;
const simulators: Simulator[] = [];

async function device(): Promise<SimulatedDevice> {
  const sim = await startSimulator({ port: 0 });
  simulators.push(sim);
  const d = sim.devices[0]!;
  await server.connect(d.address);
  return d;
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
afterAll(async () => server?.stop());

describe('run-time faults in-process', () => {
  it('cable pull: adb loses the device and cannot reach it; re-plugged, it connects again', async () => {
    const d = await device();
    d.unplug();
    expect(d.plugged).toBe(false);
    expect(d.connectionCount).toBe(0);
    const states = new Set(['offline', 'absent', 'connecting']);
    const deadline = Date.now() + 10_000;
    let state = (await server.devices()).get(d.serial) ?? 'absent';
    while (!states.has(state) && Date.now() < deadline)
      state = (await server.devices()).get(d.serial) ?? 'absent';
    expect(states.has(state), state).toBe(true);
    const shell = await server.adb(['-s', d.serial, 'shell', 'echo hi'], { timeoutMs: 10_000 });
    expect(shell.code).not.toBe(0);
    d.plug();
    // adb re-dials a TCP device it lost; the bridge's tunnel manager does the same.
    const again = await server.adb(['connect', d.address], { timeoutMs: 10_000 });
    expect(again.code).toBe(0);
    await server.waitForState(d.serial, 'device', 10_000);
    expect((await server.adb(['-s', d.serial, 'shell', 'echo back'])).stdout.toString()).toBe('back\n');
  });

  it('stall: the link stays up, nothing arrives; lifted, the queued answer arrives', async () => {
    const d = await device();
    d.setFault({ stall: true });
    const stalled = await server.adb(['-s', d.serial, 'shell', 'echo stalled'], { timeoutMs: 1500 });
    expect(stalled.code).toBe(-1); // killed after 1.5 s without an answer
    expect(d.connectionCount).toBe(1);
    d.clearFault('stall');
    await server.waitForState(d.serial, 'device', 10_000);
    expect((await server.adb(['-s', d.serial, 'shell', 'echo moving'])).stdout.toString()).toBe('moving\n');
  });

  it('unauthorized switched on a live device, then accepted: back online on the same connection', async () => {
    const d = await device();
    d.setFault({ unauthorized: true });
    await server.waitForState(d.serial, 'unauthorized', 10_000);
    d.clearFault('unauthorized');
    await server.waitForState(d.serial, 'device', 10_000);
    expect((await server.adb(['-s', d.serial, 'shell', 'echo ok'])).stdout.toString()).toBe('ok\n');
  });

  it('counts in-device listeners', async () => {
    const d = await device();
    expect(d.listeners()).toEqual([]);
    const listener = d.android.device.listen({ tcp: 27042 }, () => undefined);
    const named = d.android.device.listen({ abstract: 'helper' }, () => undefined);
    expect(d.listeners().sort()).toEqual(['localabstract:helper', 'tcp:27042']);
    listener.close();
    named.close();
    expect(d.listeners()).toEqual([]);
    expect(d.runningHelpers()).toBe(0);
  });
});

describe('devicebridge simulate --control-port', () => {
  it('switches faults, pulls the cable and reports counts over loopback HTTP', async () => {
    const child = spawn(process.execPath, [BIN, 'simulate', '--port', '0', '--json', '--control-port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const control = JSON.parse((await lines.next()).value as string).control as string;
      expect(control).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const { address } = JSON.parse((await lines.next()).value as string) as { address: string };
      await server.connect(address);
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${control}${path}`, {
          method,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const listed = await call('GET', '/devices');
      expect(listed.body.devices).toEqual([
        expect.objectContaining({ index: 0, address, faults: [], plugged: true, runningHelpers: 0 }),
      ]);
      expect((await call('PATCH', '/devices/0/faults', { faults: ['unauthorized'] })).body.faults).toEqual([
        'unauthorized',
      ]);
      await server.waitForState(address, 'unauthorized', 10_000);
      await call('DELETE', '/devices/0/faults/unauthorized');
      await server.waitForState(address, 'device', 10_000);
      expect((await call('PUT', '/devices/0/faults', { faults: ['nope'] })).status).toBe(400);
      expect((await call('POST', '/devices/0/unplug')).body).toMatchObject({
        plugged: false,
        connections: 0,
      });
      expect((await call('POST', '/devices/0/plug')).body).toMatchObject({ plugged: true });
      await server.adb(['disconnect', address]);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
