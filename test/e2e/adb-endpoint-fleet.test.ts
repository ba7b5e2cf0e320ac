/**
 * A lease's adb endpoint closes at once when the lease ends on another node (issue 14, capability
 * 5): two `devicebridge serve` processes on one Redis, node-a drives a `devicebridge simulate`
 * device, node-b drives none. The endpoint is opened through node-b (forwarded to node-a, where it
 * listens) and a client holds a TCP connection to it; the lease then ends through node-b — released,
 * or expired with either node's expiry pass claiming it (node-b defers its teardown to node-a, which
 * learns of it through the store's wake-up) — and the connection must be closed by node-a within
 * about a second, and new connections refused.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { type ClientAdb, startClientAdb } from '../support/client-adb.ts';
import {
  type FleetNode,
  http,
  REDIS_URL,
  startBridge,
  startSimulatorProcess,
  stopFleet,
} from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;

/** Connect to the endpoint and resolve when the bridge closes the connection (ms after `from()`). */
async function holdConnection(port: number): Promise<{ closed: Promise<number>; mark(): void }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  let from = performance.now();
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(performance.now() - from)),
  );
  return {
    closed,
    mark: () => {
      from = performance.now();
    },
  };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);

describe('adb endpoint closes when the lease ends on another node (e2e, two bridges)', () => {
  const redis = new Redis(REDIS_URL);
  const nodes: FleetNode[] = [];
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;
  let simulator: Awaited<ReturnType<typeof startSimulatorProcess>> | undefined;
  let clientAdb: ClientAdb | undefined;

  beforeAll(async () => {
    tmp = await tempDir();
    clientAdb = await startClientAdb();
    simulator = await startSimulatorProcess(1);
    const file = await simulator.writeDevicesFile(path.join(tmp.dir, 'devices.json'));
    nodes.push(
      await startBridge(path.join(tmp.dir, 'a'), {
        prefix,
        name: 'node-a',
        env: { DEVICEBRIDGE_DEVICES_FILE: file },
      }),
    );
    nodes.push(await startBridge(path.join(tmp.dir, 'b'), { prefix, name: 'node-b' }));
  }, 120_000);

  afterAll(async () => {
    await stopFleet({ nodes, simulator, redis, prefix, tmp });
    await clientAdb?.close();
  }, 60_000);

  async function leaseWithEndpoint(ttlSeconds: number) {
    const b = nodes[1]!;
    const acquired = await http(b.url, 'POST', '/v1/leases', { ttlSeconds, waitSeconds: 20 });
    expect(acquired.status, JSON.stringify(acquired.json)).toBe(201);
    const lease = acquired.json as { id: string; expiresAt: number };
    const opened = await http(b.url, 'POST', `/v1/leases/${lease.id}/adb`, {
      publicKey: clientAdb!.publicKey,
    });
    expect(opened.status, JSON.stringify(opened.json)).toBe(200);
    const port = (opened.json as { port: number }).port;
    return { lease, port, conn: await holdConnection(port) };
  }

  it('released through node-b: node-a closes the open connection within a second', async () => {
    const { lease, port, conn } = await leaseWithEndpoint(60);
    expect(await within(conn.closed, 300)).toBe('timeout'); // held open while the lease lives
    conn.mark();
    const released = await http(nodes[1]!.url, 'DELETE', `/v1/leases/${lease.id}`);
    expect(released.status).toBe(200);
    const ms = await within(conn.closed, 1500);
    expect(ms).not.toBe('timeout');
    expect(ms as number).toBeLessThan(1500);
    expect(await refused(port)).toBe(true);
  });

  it('expired (claimed by either node): node-a closes the open connection within a second of expiry', async () => {
    const { lease, port, conn } = await leaseWithEndpoint(2);
    const untilExpiry = lease.expiresAt - Date.now();
    expect(await within(conn.closed, Math.max(0, untilExpiry - 200))).toBe('timeout');
    conn.mark();
    const ms = await within(conn.closed, 1000 + 1500);
    expect(ms).not.toBe('timeout');
    // Expiry passes run every 500 ms on both nodes: closed within about a second of expiresAt.
    expect(ms as number).toBeLessThan(200 + 1500);
    expect(await refused(port)).toBe(true);
    const teardown = await http(nodes[1]!.url, 'GET', `/v1/leases/${lease.id}`);
    expect(teardown.json.state).toBe('expired');
  });
});
