/**
 * Node identity across a crash (issue #12): a bridge started without a node name takes a stable one
 * from its data dir (created once); after SIGKILL and a restart on the same data dir it is the same
 * node, and its `--simulate` devices of the previous run are gone (no stale records pile up).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { startCli, waitForExit } from '../support/cli.ts';
import { freePortCandidate } from '../support/device-bed.ts';

const prefix = `test:${randomUUID()}:`;
const redisUrl = 'redis://127.0.0.1:6379';

interface Devices {
  devices: Array<{ id: string; ownerNode: string; state: string; source: string }>;
}

async function serve(dir: string, adbPort: number) {
  const started = await startCli(['serve', '--port', '0', '--data-dir', dir, '--simulate', '2', '--json'], {
    env: {
      REDIS_URL: redisUrl,
      DEVICEBRIDGE_REDIS_PREFIX: prefix,
      DEVICEBRIDGE_ADB_PORT: String(adbPort),
      LOG_LEVEL: 'silent',
    },
    timeoutMs: 60_000,
  });
  const url = (JSON.parse(started.firstLine) as { url: string }).url;
  const devices = (await (await fetch(`${url}/v1/devices`)).json()) as Devices;
  return { child: started.child, url, devices: devices.devices };
}

describe('stable node identity (e2e)', () => {
  const redis = new Redis(redisUrl);
  const adbPort = freePortCandidate();
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;
  let running: Awaited<ReturnType<typeof serve>> | undefined;

  afterAll(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGTERM');
      await waitForExit(running.child, 20_000).catch(() => running?.child.kill('SIGKILL'));
    }
    await promisify(execFile)('adb', ['-P', String(adbPort), 'kill-server']).catch(() => undefined);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await tmp?.cleanup();
  }, 60_000);

  it('a restart on the same data dir after SIGKILL is the same node, without stale simulated devices', async () => {
    tmp = await tempDir();
    const dir = path.join(tmp.dir, 'node');
    running = await serve(dir, adbPort);
    const first = running.devices;
    expect(first).toHaveLength(2);
    const name = first[0]!.ownerNode;
    expect(name).not.toContain(String(running.child.pid));
    expect((await readFile(path.join(dir, 'node-id'), 'utf8')).trim()).toBe(name);

    running.child.kill('SIGKILL');
    await waitForExit(running.child);
    await promisify(execFile)('adb', ['-P', String(adbPort), 'kill-server']).catch(() => undefined);
    running = await serve(dir, adbPort);
    const second = running.devices;
    expect(second.map((d) => d.ownerNode)).toEqual([name, name]);
    expect(second).toHaveLength(2);
    expect(second.every((d) => d.state === 'online')).toBe(true);
    expect(second.map((d) => d.id).filter((id) => first.some((f) => f.id === id))).toEqual([]);
  }, 120_000);
});
