/**
 * Scale-out on one Redis, through real processes: 4 `devicebridge serve` processes sharing a Redis
 * key prefix, 10 simulated devices between them, 50 concurrent HTTP acquirers spread over the nodes
 * for LEASE_E2E_SECONDS (default 20 s). An independent log of holders (kept here, in the test
 * process) must never show two holders of one device at once, fencing tokens must increase in
 * holding order, and every lease must end released or expired with no forward left behind.
 * Any node accepts a lease-scoped call and forwards it to the node that drives the device. Then: a
 * bridge holding a lease is killed and restarted on its data dir (the same node); it still sees the
 * lease, the previous run's simulated devices are gone, and the lease expires with its teardown
 * recorded once.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper, waitForExit } from '../support/cli.ts';
import { type FleetNode, http, REDIS_URL, startBridge, stopServeNode } from '../support/fleet.ts';

const SECONDS = Number(process.env['LEASE_E2E_SECONDS'] ?? 20);
const ACQUIRERS = 50;
const SIMULATED = [3, 3, 2, 2];

type Node = FleetNode;

interface Held {
  deviceId: string;
  leaseId: string;
  token: number;
  start: number;
  end: number;
  released: boolean;
}

const prefix = `test:${randomUUID()}:`;
const redisUrl = REDIS_URL;

const startNode = (dir: string, name: string, simulate: number): Promise<Node> =>
  startBridge(dir, { prefix, name, simulate });

const stopNode = (node: Node): Promise<number | null> => stopServeNode(node);

describe('four bridges on one Redis (e2e)', () => {
  const nodes: Node[] = [];
  let tmp: { dir: string; cleanup(): Promise<void> };
  const redis = new Redis(redisUrl);

  beforeAll(async () => {
    tmp = await tempDir();
    // node-0 has the snapshot helper published (each node here has its own filesystem store).
    await publishFixtureHelper(`${tmp.dir}/node-0`);
    for (const [i, n] of SIMULATED.entries())
      nodes.push(await startNode(`${tmp.dir}/node-${i}`, `node-${i}`, n));
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) await stopNode(n).catch(() => n.child.kill('SIGKILL'));
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await tmp?.cleanup();
  }, 60_000);

  it(
    `never hands one device to two holders (${ACQUIRERS} acquirers, ${SECONDS} s)`,
    async () => {
      const all = (await http(nodes[0]!.url, 'GET', '/v1/devices')).json.devices as Array<{
        id: string;
        state: string;
        ownerNode: string;
      }>;
      expect(all).toHaveLength(10);
      expect(new Set(all.map((d) => d.ownerNode)).size).toBe(4);

      const log: Held[] = [];
      let conflicts = 0;
      const until = Date.now() + SECONDS * 1000;
      const acquirer = async (i: number) => {
        while (Date.now() < until) {
          const node = nodes[(i + log.length) % nodes.length]!;
          const ttlSeconds = 1 + (i % 3);
          const got = await http(node.url, 'POST', '/v1/leases', { ttlSeconds, waitSeconds: 2 });
          if (got.status === 409) {
            conflicts++;
            continue;
          }
          expect(got.status, JSON.stringify(got.json)).toBe(201);
          const lease = got.json as { id: string; deviceId: string; fencingToken: number; expiresAt: number };
          const start = Date.now();
          await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 40)));
          if (i % 10 === 0) {
            // Let it expire: the holder stops holding at expiresAt.
            log.push({
              deviceId: lease.deviceId,
              leaseId: lease.id,
              token: lease.fencingToken,
              start,
              end: lease.expiresAt,
              released: false,
            });
            await new Promise((r) => setTimeout(r, Math.max(0, lease.expiresAt - Date.now())));
          } else {
            const end = Date.now();
            const other = nodes[(i + 1) % nodes.length]!;
            const released = await http(other.url, 'DELETE', `/v1/leases/${lease.id}`);
            // On a loaded machine a 1 s lease may run out before its release arrives: then the
            // holder held it until expiresAt, and the release is refused as expired (never lost).
            const expired = released.status === 410;
            if (!expired) expect(released.status, JSON.stringify(released.json)).toBe(200);
            else expect(released.json.error.code).toBe('LEASE_EXPIRED');
            log.push({
              deviceId: lease.deviceId,
              leaseId: lease.id,
              token: lease.fencingToken,
              start,
              end: expired ? lease.expiresAt : end,
              released: !expired,
            });
          }
        }
      };
      await Promise.all(Array.from({ length: ACQUIRERS }, (_, i) => acquirer(i)));

      expect(log.length).toBeGreaterThan(ACQUIRERS);
      const byDevice = new Map<string, Held[]>();
      for (const h of log) byDevice.set(h.deviceId, [...(byDevice.get(h.deviceId) ?? []), h]);
      expect(byDevice.size).toBe(10);
      for (const [deviceId, held] of byDevice) {
        held.sort((a, b) => a.start - b.start);
        for (let k = 1; k < held.length; k++) {
          const prev = held[k - 1]!;
          const next = held[k]!;
          expect(
            next.start,
            `${deviceId}: ${next.leaseId} started before ${prev.leaseId} ended`,
          ).toBeGreaterThanOrEqual(prev.end);
          expect(next.token, `${deviceId}: fencing token did not increase`).toBeGreaterThan(prev.token);
        }
      }

      // Every lease ends: released ones already; expired ones once an expiry loop claims them.
      const deadline = Date.now() + 15_000;
      let active: unknown[] = [];
      do {
        active = (await http(nodes[0]!.url, 'GET', '/v1/leases')).json.leases;
        if (active.length) await new Promise((r) => setTimeout(r, 250));
      } while (active.length && Date.now() < deadline);
      expect(active).toEqual([]);
      for (const h of log) {
        const state = (await http(nodes[h.leaseId.length % 4]!.url, 'GET', `/v1/leases/${h.leaseId}`)).json
          .state;
        expect(state).toBe(h.released ? 'released' : 'expired');
      }
      // No forward left behind on any node's adb server.
      const ex = promisify(execFile);
      for (const n of nodes) {
        const { stdout } = await ex('adb', ['-P', String(n.adbPort), 'forward', '--list']);
        expect(stdout.trim()).toBe('');
      }
      process.stderr.write(`bridges-redis: ${log.length} leases, ${conflicts} conflicts after waiting\n`);
    },
    (SECONDS + 90) * 1000,
  );

  it('any node accepts a lease-scoped call: it is forwarded to the node that drives the device', async () => {
    const devices = (await http(nodes[0]!.url, 'GET', '/v1/devices')).json.devices as Array<{
      id: string;
      ownerNode: string;
    }>;
    const owned = devices.find((d) => d.ownerNode === 'node-0')!;
    const lease = (
      await http(nodes[1]!.url, 'POST', '/v1/leases', { selector: { deviceId: owned.id }, waitSeconds: 5 })
    ).json as { id: string };
    const res = await fetch(`${nodes[1]!.url}/v1/leases/${lease.id}/snapshot`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ transport: 'one-shot', format: 'xml' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-devicebridge-forwarded-by')).toBe('node-0');
    const body = (await res.json()) as { transport: string; xml: string };
    expect(body.transport).toBe('one-shot');
    expect(body.xml).toContain('</hierarchy>');
    const gesture = await http(nodes[2]!.url, 'POST', `/v1/leases/${lease.id}/gestures`, {
      kind: 'tap',
      x: 10,
      y: 10,
    });
    expect(gesture.status).toBe(200);
    expect((await http(nodes[2]!.url, 'DELETE', `/v1/leases/${lease.id}`)).status).toBe(200);
  });

  it('a killed bridge leaves its leases valid; restarted, it expires them with one teardown', async () => {
    const victim = nodes[3]!;
    // The first test's last leases may still hold every device for a few seconds: wait for one.
    const acquired = await http(victim.url, 'POST', '/v1/leases', { ttlSeconds: 3, waitSeconds: 15 });
    expect(acquired.status, JSON.stringify(acquired.json)).toBe(201);
    const lease = acquired.json as { id: string; expiresAt: number };
    victim.child.kill('SIGKILL');
    await waitForExit(victim.child);
    // A SIGKILLed bridge cannot stop its adb server: end it here so the test leaves nothing behind.
    await promisify(execFile)('adb', ['-P', String(victim.adbPort), 'kill-server']).catch(() => undefined);
    const replacement = await startNode(`${tmp.dir}/node-3`, 'node-3', 1);
    nodes[3] = replacement;
    const seen = await http(replacement.url, 'GET', `/v1/leases/${lease.id}`);
    expect(seen.json).toMatchObject({
      id: lease.id,
      state: Date.now() < lease.expiresAt ? 'active' : expect.any(String),
    });
    const deadline = Date.now() + 20_000;
    let state = '';
    while (Date.now() < deadline) {
      state = (await http(replacement.url, 'GET', `/v1/leases/${lease.id}`)).json.state;
      if (state === 'expired' && (await redis.exists(`${prefix}{leases}:td:${lease.id}`))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(state).toBe('expired');
    const record = JSON.parse((await redis.get(`${prefix}{leases}:td:${lease.id}`)) ?? 'null') as {
      reason: string;
      node: string;
    } | null;
    expect(record).toMatchObject({ reason: 'expired' });
    expect(['node-0', 'node-1', 'node-2', 'node-3']).toContain(record!.node);
    // The previous run's two simulated devices are gone; the restarted node drives its new one.
    const devices = (await http(replacement.url, 'GET', '/v1/devices')).json.devices as Array<{
      ownerNode: string;
      state: string;
    }>;
    expect(devices.filter((d) => d.ownerNode === 'node-3')).toHaveLength(1);
    expect(devices.filter((d) => d.state === 'ownerless')).toEqual([]);
  }, 120_000);
});
