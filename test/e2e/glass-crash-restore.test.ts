/**
 * The a11y settings restore survives a bridge crash (issue #9), through real processes: a separate
 * `devicebridge simulate` process is the device; a `devicebridge serve` on Redis leases it and
 * enables the glass a11y service (an a11y tree call), which journals the prior secure settings in
 * the lease store; the bridge is SIGKILLed; another `serve` with the same node name on the same
 * Redis releases the lease (or lets it expire), and the device's secure settings are what they were
 * before the lease, restored exactly once and recorded in the teardown record.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { tempDir } from '../support/bridge.ts';
import { startCli, waitForExit } from '../support/cli.ts';
import { A11Y_FIXTURE_COMPONENT, freePort } from '../support/device-bed.ts';
import { publishGlassFixtures } from '../support/glass.ts';

const run = promisify(execFile);
const prefix = `test:${randomUUID()}:`;
const RESTORED = 'restored secure settings enabled_accessibility_services, accessibility_enabled on';

type Child = Awaited<ReturnType<typeof startCli>>['child'];
let dir: { dir: string; cleanup(): Promise<void> };
let env: Record<string, string>;
let device: { address: string; serial: string };
const children: Child[] = [];
const redis = new Redis('redis://127.0.0.1:6379');

async function startBridge(): Promise<{ url: string; child: Child }> {
  const started = await startCli(['serve', '--port', '0', '--data-dir', dir.dir, '--json'], {
    env,
    timeoutMs: 60_000,
  });
  children.push(started.child);
  return { url: (JSON.parse(started.firstLine) as { url: string }).url, child: started.child };
}

async function http(url: string, method: string, p: string, body?: unknown) {
  const res = await fetch(`${url}${p}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields the answer has
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, any> };
}

/** The device's secure settings, read through the bridge's adb server (the real adb client). */
async function secure(): Promise<{ enabled: string; accessibility: string }> {
  const get = async (key: string) => (await adbShell('settings', 'get', 'secure', key)).stdout.trim();
  return {
    enabled: await get('enabled_accessibility_services'),
    accessibility: await get('accessibility_enabled'),
  };
}

beforeAll(async () => {
  dir = await tempDir('devicebridge-glass-crash-');
  await publishGlassFixtures(new FsArtifactStore(path.join(dir.dir, 'artifacts')), dir.dir);
  const sim = await startCli(['simulate', '--port', '0', '--count', '1', '--json'], { timeoutMs: 60_000 });
  children.push(sim.child);
  device = JSON.parse(sim.firstLine) as { address: string; serial: string };
  const devicesFile = path.join(dir.dir, 'devices.json');
  await writeFile(devicesFile, JSON.stringify([{ endpoint: device.address, labels: { glass: 'crash' } }]));
  env = {
    REDIS_URL: 'redis://127.0.0.1:6379',
    DEVICEBRIDGE_REDIS_PREFIX: prefix,
    DEVICEBRIDGE_NODE: 'glass-crash-node',
    DEVICEBRIDGE_ADB_PORT: String(await freePort()),
    DEVICEBRIDGE_DEVICES_FILE: devicesFile,
    DEVICEBRIDGE_HEALTH_INTERVAL_MS: '1000',
    LOG_LEVEL: 'silent',
  };
}, 120_000);

afterAll(async () => {
  for (const child of children.reverse()) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await waitForExit(child, 20_000).catch(() => child.kill('SIGKILL'));
    }
  }
  if (env) await run('adb', ['-P', env['DEVICEBRIDGE_ADB_PORT']!, 'kill-server']).catch(() => undefined);
  await dir?.cleanup();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
}, 60_000);

/** Adb on the bridge's adb server, against the simulated device. */
const adbShell = (...args: string[]) =>
  run('adb', ['-P', env['DEVICEBRIDGE_ADB_PORT']!, '-s', device.serial, 'shell', ...args], {
    timeout: 15_000,
  });

/** Bridge A: lease, (a prior value of its own), enable a11y by a tree call, then SIGKILL it. */
async function leaseWithA11yThenKill(
  ttlSeconds: number,
  prior?: string,
): Promise<{ id: string; before: { enabled: string; accessibility: string } }> {
  const first = await startBridge();
  if (prior !== undefined) {
    // The farm's own value, set between leases and taken into the device's baseline.
    await adbShell('settings', 'put', 'secure', 'enabled_accessibility_services', prior);
    const devices = (await http(first.url, 'GET', '/v1/devices')).body['devices'] as Array<{ id: string }>;
    for (const d of devices) {
      const recorded = await http(first.url, 'POST', `/v1/devices/${d.id}/baseline`);
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(200);
    }
  }
  const lease = await http(first.url, 'POST', '/v1/leases', {
    selector: { labels: { glass: 'crash' } },
    ttlSeconds,
    waitSeconds: 30,
  });
  expect(lease.status, JSON.stringify(lease.body)).toBe(201);
  const id = lease.body['id'] as string;
  const before = await secure();
  const tree = await http(first.url, 'GET', `/v1/leases/${id}/a11y/tree`);
  expect(tree.status, JSON.stringify(tree.body)).toBe(200);
  // What the tenant leaves: the bridge that ends the lease after the crash resets it.
  await adbShell('echo left > /data/local/tmp/left-behind; settings put global tenant_marker 1');
  expect((await secure()).enabled).toContain(A11Y_FIXTURE_COMPONENT);
  first.child.kill('SIGKILL');
  await waitForExit(first.child, 10_000);
  return { id, before };
}

describe('glass a11y settings restore after a bridge crash (e2e)', () => {
  it('SIGKILL while a11y is enabled; another bridge releases the lease and restores the settings once', async () => {
    // A prior value of its own that the lease must give back.
    const { id, before } = await leaseWithA11yThenKill(300, 'com.keep/.Me');
    expect(before.enabled).toBe('com.keep/.Me');

    const second = await startBridge();
    expect((await http(second.url, 'GET', `/v1/leases/${id}`)).body).toMatchObject({ id, state: 'active' });
    const released = await http(second.url, 'DELETE', `/v1/leases/${id}`);
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    const teardown = released.body['teardown'] as { actions: string[]; failures: string[] };
    expect(teardown.failures).toEqual([]);
    expect(teardown.actions.filter((a) => a.startsWith(RESTORED))).toEqual([`${RESTORED} ${device.serial}`]);
    expect(await secure()).toEqual(before);
    expect(teardown.actions).toContain('reset: removed /data/local/tmp/left-behind (added during the lease)');
    expect((await adbShell('settings get global tenant_marker; ls /data/local/tmp')).stdout).not.toMatch(
      /^1$|left-behind/m,
    );
    second.child.kill('SIGTERM');
    await waitForExit(second.child, 20_000);
  }, 180_000);

  it('SIGKILL while a11y is enabled; another bridge expires the lease and restores the settings once', async () => {
    const { id, before } = await leaseWithA11yThenKill(3);
    const second = await startBridge();
    const deadline = Date.now() + 30_000;
    let record: { reason?: string; actions?: string[]; failures?: string[] } | null = null;
    while (Date.now() < deadline) {
      record = JSON.parse((await redis.get(`${prefix}{leases}:td:${id}`)) ?? 'null');
      if (record !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(record, 'the teardown record of the expired lease').not.toBeNull();
    expect(record!.failures).toEqual([]);
    expect(record!.actions!.filter((a) => a.startsWith(RESTORED))).toEqual([`${RESTORED} ${device.serial}`]);
    expect(await secure()).toEqual(before);
    expect(record!.actions).toContain('reset: deleted setting global tenant_marker');
    expect((await http(second.url, 'GET', `/v1/leases/${id}`)).body['state']).toBe('expired');
  }, 180_000);
});
