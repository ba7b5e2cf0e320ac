/**
 * Teardown runs on the owner (issue #12): two `devicebridge serve` processes on one Redis; node-a
 * drives a simulated device, node-b drives none. A client leases node-a's device through node-b,
 * opens a helper session through node-b (forwarded to node-a: a helper session and an adb forward
 * on node-a) and releases through node-b. Three times over: node-a's adb server is left with no
 * forward, and each teardown ran and was recorded once, on node-a, with its helper session closed.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper, startCli, waitForExit } from '../support/cli.ts';
import { freePortCandidate } from '../support/device-bed.ts';

const prefix = `test:${randomUUID()}:`;
const redisUrl = 'redis://127.0.0.1:6379';
const ex = promisify(execFile);

interface Node {
  url: string;
  adbPort: number;
  child: Awaited<ReturnType<typeof startCli>>['child'];
}

async function startNode(dir: string, name: string, simulate: number): Promise<Node> {
  const adbPort = freePortCandidate();
  const started = await startCli(
    ['serve', '--port', '0', '--data-dir', dir, '--simulate', String(simulate), '--json'],
    {
      env: {
        REDIS_URL: redisUrl,
        DEVICEBRIDGE_REDIS_PREFIX: prefix,
        DEVICEBRIDGE_NODE: name,
        DEVICEBRIDGE_ADB_PORT: String(adbPort),
        LOG_LEVEL: 'silent',
      },
      timeoutMs: 60_000,
    },
  );
  return { url: (JSON.parse(started.firstLine) as { url: string }).url, adbPort, child: started.child };
}

// biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
async function http(
  url: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${route}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

describe('teardown runs on the owner (e2e, two bridges)', () => {
  const redis = new Redis(redisUrl);
  const nodes: Node[] = [];
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;

  beforeAll(async () => {
    tmp = await tempDir();
    await publishFixtureHelper(path.join(tmp.dir, 'a'));
    nodes.push(await startNode(path.join(tmp.dir, 'a'), 'node-a', 1));
    nodes.push(await startNode(path.join(tmp.dir, 'b'), 'node-b', 0));
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) {
      if (n.child.exitCode === null) n.child.kill('SIGTERM');
      await waitForExit(n.child, 20_000).catch(() => n.child.kill('SIGKILL'));
      await ex('adb', ['-P', String(n.adbPort), 'kill-server']).catch(() => undefined);
    }
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await tmp?.cleanup();
  }, 60_000);

  it('three releases through a non-owner leave no forward and no helper session on the owner', async () => {
    const [a, b] = nodes as [Node, Node];
    for (let round = 0; round < 3; round++) {
      const acquired = await http(b.url, 'POST', '/v1/leases', { waitSeconds: 10 });
      expect(acquired.status, JSON.stringify(acquired.json)).toBe(201);
      const lease = acquired.json as { id: string; deviceId: string };
      const snap = await http(b.url, 'POST', `/v1/leases/${lease.id}/snapshot`, {
        transport: 'session',
        format: 'xml',
      });
      expect(snap.status, JSON.stringify(snap.json)).toBe(200);
      expect(snap.json.transport).toBe('session');
      const { stdout: during } = await ex('adb', ['-P', String(a.adbPort), 'forward', '--list']);
      expect(during.trim(), 'the session holds a forward on the owner').not.toBe('');

      const released = await http(b.url, 'DELETE', `/v1/leases/${lease.id}`);
      expect(released.status, JSON.stringify(released.json)).toBe(200);
      expect(released.json.teardown).toMatchObject({ node: 'node-a', reason: 'released', failures: [] });
      const { stdout: after } = await ex('adb', ['-P', String(a.adbPort), 'forward', '--list']);
      expect(after.trim(), `round ${round}: forwards left on the owner`).toBe('');
      const recorded = JSON.parse((await redis.get(`${prefix}{leases}:td:${lease.id}`)) ?? 'null');
      expect(recorded).toMatchObject({ node: 'node-a', reason: 'released', failures: [] });
      expect(recorded.actions.join('\n')).toMatch(/session/);
    }
    expect(await redis.hlen(`${prefix}{leases}:deferred`)).toBe(0);
  }, 120_000);

  it('expired leases are torn down on the owner whichever node claims the expiry', async () => {
    const [a, b] = nodes as [Node, Node];
    const ids: string[] = [];
    for (let round = 0; round < 3; round++) {
      const acquired = await http(b.url, 'POST', '/v1/leases', { ttlSeconds: 1, waitSeconds: 10 });
      expect(acquired.status, JSON.stringify(acquired.json)).toBe(201);
      const id = (acquired.json as { id: string }).id;
      ids.push(id);
      const snap = await http(b.url, 'POST', `/v1/leases/${id}/snapshot`, {
        transport: 'session',
        format: 'xml',
      });
      expect(snap.status, JSON.stringify(snap.json)).toBe(200);
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !(await redis.exists(`${prefix}{leases}:td:${id}`))) {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    for (const id of ids) {
      const recorded = JSON.parse((await redis.get(`${prefix}{leases}:td:${id}`)) ?? 'null');
      expect(recorded, id).toMatchObject({ node: 'node-a', reason: 'expired', failures: [] });
      expect(recorded.actions.join('\n')).toMatch(/session/);
    }
    const { stdout } = await ex('adb', ['-P', String(a.adbPort), 'forward', '--list']);
    expect(stdout.trim()).toBe('');
    expect(await redis.hlen(`${prefix}{leases}:deferred`)).toBe(0);
  }, 120_000);
});
