/**
 * Chaos: the bridge process is SIGKILLed mid-lease (leases on Redis). The same node comes back
 * (same name, adb port and Redis prefix); the lease is not lost, the device serves again without
 * operator action, and after release nothing the killed process started is left: no forward on the
 * adb server (it outlived the bridge), no helper running on the device. The simulator runs in this
 * process, so it survives the kill like a real device would.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { tempDir } from '../support/bridge.ts';
import { publishFixtureHelper, startCli, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';

const run = promisify(execFile);
type Json = Record<string, any>;
const prefix = `test:${randomUUID()}:`;

let sim: Simulator;
let dir: { dir: string; cleanup(): Promise<void> };
let env: Record<string, string>;
const children: Array<Awaited<ReturnType<typeof startCli>>['child']> = [];

async function startBridge(): Promise<string> {
  const started = await startCli(['serve', '--port', '0', '--data-dir', dir.dir, '--json'], {
    env,
    timeoutMs: 60_000,
  });
  children.push(started.child);
  return (JSON.parse(started.firstLine) as { url: string }).url;
}

async function http(url: string, method: string, p: string, body?: unknown) {
  const started = performance.now();
  const res = await fetch(`${url}${p}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: (text ? JSON.parse(text) : null) as Json,
    ms: performance.now() - started,
  };
}

async function forwards(): Promise<string[]> {
  const { stdout } = await run('adb', ['-P', env['DEVICEBRIDGE_ADB_PORT']!, 'forward', '--list'], {
    timeout: 10_000,
  });
  return stdout.split('\n').filter((l) => l.trim() !== '');
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  dir = await tempDir('devicebridge-chaos-kill-');
  await publishFixtureHelper(dir.dir);
  const devicesFile = path.join(dir.dir, 'devices.json');
  await writeFile(
    devicesFile,
    JSON.stringify([{ endpoint: sim.devices[0]!.address, labels: { chaos: 'kill' } }]),
  );
  env = {
    REDIS_URL: 'redis://127.0.0.1:6379',
    DEVICEBRIDGE_REDIS_PREFIX: prefix,
    DEVICEBRIDGE_NODE: 'chaos-kill-node',
    DEVICEBRIDGE_ADB_PORT: String(await freePort()),
    DEVICEBRIDGE_DEVICES_FILE: devicesFile,
    DEVICEBRIDGE_HEALTH_INTERVAL_MS: '1000',
    LOG_LEVEL: 'silent',
  };
}, 60_000);

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await waitForExit(child, 20_000).catch(() => child.kill('SIGKILL'));
    }
  }
  await run('adb', ['-P', env['DEVICEBRIDGE_ADB_PORT']!, 'kill-server']).catch(() => undefined);
  await sim?.close();
  await dir?.cleanup();
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe('chaos: bridge SIGKILL mid-lease (Redis)', () => {
  it('the lease survives, the device serves again, and release leaves no forward and no helper', async () => {
    const device = sim.devices[0]!;
    const first = await startBridge();
    const lease = await http(first, 'POST', '/v1/leases', {
      selector: { labels: { chaos: 'kill' } },
      waitSeconds: 20,
    });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    const id = lease.body.id as string;
    const warm = await http(first, 'POST', `/v1/leases/${id}/snapshot`, {
      transport: 'session',
      format: 'xml',
    });
    expect(warm.status).toBe(200);
    // What the killed bridge leaves behind: its session's forward (from a unix socket in its private
    // directory: its own adb server) and the running helper.
    const left = await forwards();
    expect(left).toHaveLength(1);
    const socketFile = /localfilesystem:(\S+)/.exec(left[0]!)?.[1];
    expect(socketFile, left[0]).toBeDefined();
    expect(existsSync(socketFile!)).toBe(true);
    expect(device.runningHelpers()).toBe(1);

    children[0]!.kill('SIGKILL');
    await waitForExit(children[0]!, 10_000);
    const killedAt = performance.now();

    const second = await startBridge();
    const seen = await http(second, 'GET', `/v1/leases/${id}`);
    expect(seen.body).toMatchObject({ id, state: 'active' });
    let served: Awaited<ReturnType<typeof http>> | undefined;
    while (performance.now() - killedAt < 30_000) {
      served = await http(second, 'POST', `/v1/leases/${id}/snapshot`, {
        format: 'xml',
        timeoutMs: 2000,
        deadlineMs: 4000,
      });
      if (served.status === 200) break;
      expect(served.body.error?.retryable, JSON.stringify(served.body.error)).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(served?.status, JSON.stringify(served?.body?.error)).toBe(200);
    const recoveryS = (performance.now() - killedAt) / 1000;

    const released = await http(second, 'DELETE', `/v1/leases/${id}`);
    expect(released.status).toBe(200);
    expect(released.body.teardown.failures).toEqual([]);
    // The killed bridge's own forward is removed when the restarted node reconciles at start-up, its
    // socket file and emptied directory with it.
    expect(await forwards()).toEqual([]);
    expect(existsSync(socketFile!)).toBe(false);
    expect(existsSync(path.dirname(socketFile!))).toBe(false);
    expect(device.runningHelpers()).toBe(0);
    const devices = (await http(second, 'GET', '/v1/devices')).body.devices as Json[];
    expect(devices.map((d) => d.state)).toEqual(['online']);
    process.stdout.write(
      `\nchaos summary\n| fault | code | retryable | recovery (s) | bound (s) |\n|---|---|---|---|---|\n` +
        `| bridge SIGKILL mid-lease (Redis) | lease kept (200 after restart) | - | ${recoveryS.toFixed(2)} | 30 |\n`,
    );
  }, 120_000);
});
