/**
 * A bridge node for the live screen benches, run as
 * `node --expose-gc --import tsx screen-node.ts DATA_DIR DEVICE_ADDRESS`: the real node (`startNode`,
 * its own adb server on a private port, memory lease store, the test tokens) driving one simulated
 * device at DEVICE_ADDRESS (a `devicebridge simulate` process), with the glass agent released
 * (a jar the simulator runs, its encoder mode included), so a lease's screen is the device's own
 * stream: the agent's encoder on the simulator (ffmpeg libx264). At most 5 viewers per lease.
 *
 * Prints `{"url", "pid"}` as one JSON line, then answers one JSON line per line on stdin:
 * `stats LEASE` → this process's CPU (process.cpuUsage(), µs), RSS, heap, and the lease's viewers'
 * frame counters; `gc` → the same after a forced collection (the viewers' figures for `LEASE`).
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { FsArtifactStore } from '../../../src/artifacts/fs-store.ts';
import { loadConfig } from '../../../src/config.ts';
import { startNode } from '../../../src/node/index.ts';
import { publishRelease } from '../../../src/releases/publish.ts';
import { writeTokensFile } from '../../support/bridge.ts';
import { buildDexJar } from '../../support/dex-jar.ts';
import { freePort } from '../../support/ports.ts';

/** The glass agent's main class and its encoder mode (test/support/device-bed.ts, which loads the simulator). */
const GLASS_AGENT_MAIN = 'dev.devicebridge.glassagent.Main';
const GLASS_SCREEN_MAIN = 'dev.devicebridge.glassagent.ScreenMain';

const [dataDir, address] = process.argv.slice(2);
if (dataDir === undefined || address === undefined) {
  throw new Error('usage: screen-node.ts DATA_DIR DEVICE_ADDRESS');
}

// The glass agent release: a dex jar defining the agent's main class and its encoder mode.
const jar = path.join(dataDir, 'glass-agent.jar');
const bytes = buildDexJar([
  GLASS_AGENT_MAIN,
  'dev.devicebridge.glassagent.core.AgentProtocol',
  GLASS_SCREEN_MAIN,
]);
await writeFile(jar, bytes);
await publishRelease(new FsArtifactStore(path.join(dataDir, 'artifacts')), {
  apkPath: jar,
  name: 'glass-agent',
  version: `1.0.0+${createHash('sha256').update(bytes).digest('hex').slice(0, 8)}`,
  kind: 'app-process-jar',
  mainClass: GLASS_AGENT_MAIN,
  socketName: 'glass-agent',
});
const devices = path.join(dataDir, 'devices.json');
await writeFile(devices, JSON.stringify([{ endpoint: address }]));

const config = loadConfig(
  {
    DEVICEBRIDGE_DATA_DIR: dataDir,
    DEVICEBRIDGE_PORT: '0',
    DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(dataDir),
    DEVICEBRIDGE_DEVICES_FILE: devices,
    DEVICEBRIDGE_ADB_PORT: String(await freePort()),
    DEVICEBRIDGE_SCREEN_MAX_VIEWERS: '5',
    LOG_LEVEL: 'silent',
  },
  {},
);
const node = await startNode(config);
const room = node.services.deviceSide?.room;
if (room === undefined) throw new Error(`the bridge node has no device side: ${node.deviceError ?? '?'}`);

const answer = (lease: string) => {
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  return {
    cpuUs: cpu.user + cpu.system,
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    external: memory.external,
    viewers: room.screen.stats(lease),
  };
};

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, lease = ''] = line.trim().split(/\s+/);
  if (command === 'gc') (globalThis as { gc?: () => void }).gc?.();
  process.stdout.write(`${JSON.stringify(answer(lease))}\n`);
});
process.stdin.on('end', () => {
  void node.close().then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ url: node.url, pid: process.pid })}\n`);
