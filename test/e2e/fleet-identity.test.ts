/**
 * Node identity across a crash (issue #12): a bridge started without a node name takes a stable one
 * from its data dir (created once); after SIGKILL and a restart on the same data dir it is the same
 * node, and its `--simulate` devices of the previous run are gone (no stale records pile up). A
 * clean shutdown leaves no ghost: the node leaves the directory and its simulated devices are gone.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { runCli, waitForExit } from '../support/cli.ts';
import { freePort } from '../support/device-bed.ts';
import {
  deleteKeys,
  type FleetNode,
  http,
  killAdbServer,
  REDIS_URL,
  startBridge,
  stopBridge,
} from '../support/fleet.ts';

const prefix = `test:${randomUUID()}:`;

interface Device {
  id: string;
  ownerNode: string;
  state: string;
}

describe('stable node identity (e2e)', () => {
  const redis = new Redis(REDIS_URL);
  let tmp: { dir: string; cleanup(): Promise<void> } | undefined;
  let running: FleetNode | undefined;
  const devices = async (node: FleetNode): Promise<Device[]> =>
    (await http(node.url, 'GET', '/v1/devices')).json.devices;

  afterAll(async () => {
    if (running) await stopBridge(running);
    await deleteKeys(redis, prefix);
    await redis.quit();
    await tmp?.cleanup();
  }, 60_000);

  it('a restart on the same data dir after SIGKILL is the same node, without stale simulated devices', async () => {
    tmp = await tempDir();
    const dir = path.join(tmp.dir, 'node');
    running = await startBridge(dir, { prefix, simulate: 2 });
    const first = await devices(running);
    expect(first).toHaveLength(2);
    const name = first[0]!.ownerNode;
    expect(name).not.toContain(String(running.child.pid));
    expect((await readFile(path.join(dir, 'node-id'), 'utf8')).trim()).toBe(name);

    running.child.kill('SIGKILL');
    await waitForExit(running.child);
    await killAdbServer(running.adbPort);
    running = await startBridge(dir, { prefix, simulate: 2 });
    const second = await devices(running);
    expect(second.map((d) => d.ownerNode)).toEqual([name, name]);
    expect(second.every((d) => d.state === 'online')).toBe(true);
    expect(second.map((d) => d.id).filter((id) => first.some((f) => f.id === id))).toEqual([]);

    // A second live process on the same data dir is refused before it touches anything (finding 11):
    // exit 2 naming the data dir and the settings; the first keeps its devices.
    const refused = await runCli(['serve', '--port', '0', '--data-dir', dir, '--simulate', '1'], {
      env: {
        REDIS_URL,
        DEVICEBRIDGE_REDIS_PREFIX: prefix,
        DEVICEBRIDGE_ADB_PORT: String(await freePort()),
      },
      timeoutMs: 60_000,
    });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`data dir ${dir}`);
    expect(refused.stderr).toMatch(/DEVICEBRIDGE_DATA_DIR.*DEVICEBRIDGE_NODE/);
    expect((await devices(running)).map((d) => d.id).sort()).toEqual(second.map((d) => d.id).sort());

    // A clean shutdown: no directory entry, no device records left behind.
    await stopBridge(running);
    expect(running.child.exitCode).toBe(0);
    expect(await redis.exists(`${prefix}{devicebridge}:node:${name}`)).toBe(0);
    expect(await redis.scard(`${prefix}{devicebridge}:devices`)).toBe(0);
  }, 120_000);
});
