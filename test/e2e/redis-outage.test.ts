/**
 * Redis outage through a real `serve` process on a private redis-server (its own port, no
 * persistence): while Redis is down, API calls answer a typed 503 with retryable: true within
 * about two seconds (not a 12 s hang and a 500 INTERNAL), `/readyz` says the lease store is down
 * and the process stays up; when Redis comes back empty, the node re-publishes the device it
 * drives and tears down, on the device, the lease whose data was lost (its helper session and adb
 * forward), and new leases work again.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceBridgeClient } from '../../src/client/index.ts';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';
import { httpJson, type ServeNode, startServeNode, stopServeNode } from '../support/fleet.ts';

const run = promisify(execFile);

/** A throwaway redis-server on `port` (no RDB, no AOF: a restart comes back empty). */
/** A private redis-server on `port`, once *it* answers there (its pid, not just any PONG). */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const until = Date.now() + 10_000;
  for (;;) {
    const info = await run('redis-cli', ['-p', String(port), 'info', 'server']).then(
      (r) => r.stdout,
      () => '',
    );
    if (info.includes(`process_id:${child.pid}\r`)) return child;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`redis-server on ${port} exited (port taken?)`);
    }
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on ${port} did not answer`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function forwards(adbPort: number): Promise<string> {
  return (await run('adb', ['-P', String(adbPort), 'forward', '--list'])).stdout.trim();
}

describe('Redis outage (e2e, private redis-server)', () => {
  let redisPort = 0;
  let redis: ChildProcess | undefined;
  let tmp: { dir: string; cleanup(): Promise<void> };
  let node: ServeNode;

  beforeAll(async () => {
    tmp = await tempDir();
    // The port was free when asked; another process may take it before redis binds: a new one then.
    for (let attempt = 0; attempt < 5 && !redis; attempt++) {
      redisPort = await freePort();
      redis = await startRedis(redisPort).catch(() => undefined);
    }
    if (!redis) throw new Error('could not start a private redis-server');
    await publishFixtureHelper(tmp.dir);
    node = await startServeNode({
      dataDir: tmp.dir,
      name: 'outage',
      simulate: 1,
      redisUrl: `redis://127.0.0.1:${redisPort}`,
      env: { DEVICEBRIDGE_HEALTH_INTERVAL_MS: '500' },
    });
  }, 90_000);

  afterAll(async () => {
    if (node) await stopServeNode(node);
    redis?.kill('SIGKILL');
    await tmp?.cleanup();
  }, 60_000);

  it('answers 503 retryable fast while Redis is down; re-publishes devices and tears down lost leases when it returns', async () => {
    const client = new DeviceBridgeClient({ baseUrl: node.url });
    const lease = await client.acquireLease({ ttlSeconds: 300 });
    const shot = await client.snapshot(lease.id, { transport: 'session' });
    expect(shot.transport).toBe('session');
    expect(await forwards(node.adbPort)).not.toBe('');

    redis!.kill('SIGKILL');
    await waitForExit(redis!, 5000);
    for (const [method, path, body] of [
      ['GET', '/v1/leases', undefined],
      ['POST', '/v1/leases', { ttlSeconds: 60 }],
      ['GET', `/v1/leases/${lease.id}`, undefined],
      ['GET', '/v1/devices', undefined],
      ['POST', `/v1/leases/${lease.id}/snapshot`, {}],
    ] as const) {
      const answer = await httpJson(node.url, method, path, body, 15_000);
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.json)}`).toBe(503);
      expect(answer.json.error).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
      expect(answer.json.error.message).toMatch(/redis/i);
      expect(answer.ms, `${method} ${path}`).toBeLessThan(2500);
    }
    const ready = await httpJson(node.url, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json.checks.leaseStore).not.toBe('ok');
    expect((await httpJson(node.url, 'GET', '/healthz')).status).toBe(200);
    expect(node.child.exitCode).toBeNull();

    // Redis comes back with nothing in it.
    redis = await startRedis(redisPort);
    const devices = await eventually('the device is re-published', async () => {
      const answer = await httpJson(node.url, 'GET', '/v1/devices');
      const list = answer.json?.devices as Array<{ state: string; ownerNode: string }> | undefined;
      return list?.length === 1 && list[0]!.state === 'online' ? list : undefined;
    });
    expect(devices[0]!.ownerNode).toBe('outage');
    // The lost lease's session and forward are gone from the device side.
    await eventually('the lost lease is torn down', async () =>
      (await forwards(node.adbPort)) === '' ? true : undefined,
    );
    expect((await httpJson(node.url, 'GET', '/readyz')).status).toBe(200);
    const again = await httpJson(node.url, 'POST', '/v1/leases', { ttlSeconds: 60 });
    expect(again.status, JSON.stringify(again.json)).toBe(201);
    expect(node.child.exitCode).toBeNull();
  }, 120_000);
});
