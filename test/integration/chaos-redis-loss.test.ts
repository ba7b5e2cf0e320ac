/**
 * Chaos: Redis loses its data (restarted empty) under a fleet of three `devicebridge serve`
 * processes on one key prefix — node-a drives a simulated device, node-b and node-c drive none.
 * After each loss, an acquire through any node never answers `404 NOT_FOUND` for the device (a
 * client would give up on a device that exists): it gets the device, or a retryable error, and with
 * `waitSeconds` it gets the device. The fencing token it carries is above every token handed out
 * before, through every node (systems outside the bridge order by it), and the lease is served
 * (a snapshot through the acquiring node runs on the device's owner). A summary table is printed.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishFixtureHelper } from '../support/cli.ts';
import { deleteKeys, http, REDIS_URL, type ServeNode, startBridge, stopBridge } from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;
const env = { DEVICEBRIDGE_HEALTH_INTERVAL_MS: '1000' };
const redis = new Redis(REDIS_URL);
let dir: string;
let nodes: Record<'a' | 'b' | 'c', ServeNode>;
let deviceId: string;
const rows: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'db-chaos-redis-loss-'));
  // The device's owner runs the snapshot helper from its own store.
  await publishFixtureHelper(path.join(dir, 'a'));
  const [a, b, c] = await Promise.all([
    startBridge(path.join(dir, 'a'), { prefix, name: 'node-a', simulate: 1, env }),
    startBridge(path.join(dir, 'b'), { prefix, name: 'node-b', simulate: 0, env }),
    startBridge(path.join(dir, 'c'), { prefix, name: 'node-c', simulate: 0, env }),
  ]);
  nodes = { a: a!, b: b!, c: c! };
  const listed = await http(a!.url, 'GET', '/v1/devices');
  expect(listed.json.devices, JSON.stringify(listed.json)).toHaveLength(1);
  deviceId = listed.json.devices[0].id as string;
}, 120_000);

afterAll(async () => {
  process.stdout.write(
    `\nchaos: Redis loses its data\n| through | right after the loss | with waitSeconds | fencing token |\n|---|---|---|---|\n${rows.join('\n')}\n`,
  );
  if (nodes) await Promise.all(Object.values(nodes).map((n) => stopBridge(n)));
  await deleteKeys(redis, prefix);
  await redis.quit();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Lease the device through `node`, take a snapshot through it (the owner serves), release. */
async function cycle(node: ServeNode, what: string): Promise<number> {
  const acquired = await http(node.url, 'POST', '/v1/leases', { selector: { deviceId }, waitSeconds: 30 });
  expect(acquired.status, `${what}: ${JSON.stringify(acquired.json)}`).toBe(201);
  const leaseId = acquired.json.id as string;
  const snapshot = await http(node.url, 'POST', `/v1/leases/${leaseId}/snapshot`, { format: 'xml' });
  expect(snapshot.status, `${what}: snapshot ${JSON.stringify(snapshot.json).slice(0, 400)}`).toBe(200);
  const released = await http(node.url, 'DELETE', `/v1/leases/${leaseId}`);
  expect(released.status, `${what}: release ${JSON.stringify(released.json)}`).toBe(200);
  return acquired.json.fencingToken as number;
}

describe('chaos: Redis loses its data under a fleet', () => {
  it('acquires through every node never answer NOT_FOUND, and fencing tokens never go back', async () => {
    const handedOut: number[] = [];
    for (const name of ['a', 'b', 'c'] as const)
      handedOut.push(await cycle(nodes[name], `before, node-${name}`));
    expect(handedOut).toEqual([...handedOut].sort((x, y) => x - y));

    for (const name of ['c', 'b', 'a', 'c'] as const) {
      const node = nodes[name];
      await deleteKeys(redis, prefix);
      const now = await http(node.url, 'POST', '/v1/leases', { selector: { deviceId } });
      expect(now.status, `node-${name} right after the loss: ${JSON.stringify(now.json)}`).not.toBe(404);
      let first: string;
      if (now.status === 201) {
        first = '201';
        expect(now.json.fencingToken).toBeGreaterThan(Math.max(...handedOut));
        handedOut.push(now.json.fencingToken);
        expect((await http(node.url, 'DELETE', `/v1/leases/${now.json.id}`)).status).toBe(200);
      } else {
        expect(now.status, JSON.stringify(now.json)).toBe(503);
        expect(now.json.error.retryable).toBe(true);
        first = `503 ${now.json.error.code} (retryable)`;
      }
      await deleteKeys(redis, prefix);
      const token = await cycle(node, `node-${name} after the loss`);
      expect(token, `node-${name}: a token went back`).toBeGreaterThan(Math.max(...handedOut));
      expect(Number.isSafeInteger(token)).toBe(true);
      handedOut.push(token);
      rows.push(`| node-${name} | ${first} | 201 | ${token} |`);
    }
  }, 240_000);
});
