/**
 * A tunnel that accepts and at once closes while its far side is not up yet (a relay started before
 * its device) must come online once the device answers: a real `devicebridge serve` (memory
 * stores, its own Debian adb server), a real TCP relay on loopback in front of one simulated device,
 * and the devices file naming the relay.
 */

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/bridge.ts';
import { http, type ServeNode, startServeNode, startSimulatorProcess, stopBridge } from '../support/fleet.ts';
import { type TcpRelay, tcpRelay } from '../support/tcp-relay.ts';

/**
 * How many connections the relay closes at once before it lets one through (EARLY_CLOSES): counted,
 * not timed, so a slow start of `serve` on a busy machine cannot use up the window before the bridge
 * ever dials. A long closed spell ends in quarantine instead (the health loop's repeated failures, as
 * the docs say).
 */
const EARLY_CLOSES = Number(process.env['EARLY_CLOSES'] ?? 3);

describe('a tunnel that closes connections until its device is up (e2e)', () => {
  let node: ServeNode | undefined;
  let simulator: Awaited<ReturnType<typeof startSimulatorProcess>> | undefined;
  let relay: TcpRelay | undefined;
  let tmp: Awaited<ReturnType<typeof tempDir>> | undefined;

  afterAll(async () => {
    if (node) await stopBridge(node);
    await simulator?.stop();
    await relay?.close();
    await tmp?.cleanup();
  }, 60_000);

  it('comes online once the device answers', async () => {
    tmp = await tempDir();
    simulator = await startSimulatorProcess(1);
    const [host, port] = simulator.addresses[0]!.split(':') as [string, string];
    relay = await tcpRelay(`tcp://${host}:${port}`, { refuseFirst: EARLY_CLOSES });
    const relayPort = new URL(relay.url).port;
    const file = path.join(tmp.dir, 'devices.json');
    await writeFile(file, JSON.stringify([{ endpoint: `127.0.0.1:${relayPort}` }]));
    const startAt = Date.now();
    node = await startServeNode({
      dataDir: path.join(tmp.dir, 'node'),
      redisUrl: null,
      env: { DEVICEBRIDGE_DEVICES_FILE: file, DEVICEBRIDGE_HEALTH_INTERVAL_MS: '500' },
    });
    const started = Date.now();
    process.stderr.write(`early-close: serve listening after ${started - startAt} ms\n`);
    let last = '';
    let online = false;
    while (Date.now() - started < 60_000) {
      const r = await http(node.url, 'GET', '/v1/devices');
      const devices = (r.json as { devices: Array<{ state: string; endpoint: string }> }).devices;
      last = JSON.stringify(devices.map((d) => `${d.endpoint}/${d.state}`));
      if (devices.length === 1 && devices[0]!.state === 'online') {
        online = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    process.stderr.write(
      `early-close: ${relay.refused} connections closed early; online after ${Date.now() - started} ms (${last})\n`,
    );
    expect(relay.refused).toBe(EARLY_CLOSES);
    expect(online, last).toBe(true);
  }, 90_000);
});
