/**
 * The bridge's glass agent driver against a simulated device through the real adb server: push by
 * sha256 (skipped when the device holds the same bytes), start on a held shell, forward through the
 * ledger, readiness by banner + ping, a stale agent killed, a dead agent started again, and close
 * leaving no forward and no agent.
 */

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { GlassAgent, stopGlassAgentProcesses } from '../../src/helpers/glass/agent-driver.ts';
import { glassAgentMainClasses } from '../../src/helpers/glass/companions.ts';
import type { AppProcessJarManifest } from '../../src/manifest/index.ts';
import { ReleaseRepository } from '../../src/releases/repository.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { tempDir } from '../support/bridge.ts';
import {
  type DeviceBed,
  glassAgentFixture,
  GLASS_AGENT_MAIN as MAIN,
  startDeviceBed,
} from '../support/device-bed.ts';
import { publishGlassAgent } from '../support/glass.ts';

let bed: DeviceBed;
let tmp: { dir: string; cleanup(): Promise<void> };
let jarPath: string;
let manifest: AppProcessJarManifest;

const android = () => bed.sim.devices[0]!.android as SimAndroidHandle;
const agentListening = () => android().listening().includes('localabstract:glass-agent');

beforeAll(async () => {
  bed = await startDeviceBed();
  tmp = await tempDir();
  ({ jarPath, manifest } = await glassAgentFixture(tmp.dir));
}, 60_000);

afterAll(async () => {
  await bed?.close();
  await tmp?.cleanup();
});

const start = (owner = 'lease-a') =>
  GlassAgent.start({ device: bed.device(), manifest, jarPath, owner, intervalMs: 50 });

describe('glass agent driver', () => {
  it('pkill takes an extended regex as toybox does; the bridge kills main classes literally, every one it names', async () => {
    const device = android().device;
    const killed: string[] = [];
    const lookalike = MAIN.replaceAll('.', 'x');
    const older = 'com.fixedwidth.glassagent.Main';
    const started = [MAIN, lookalike, older].map((main) =>
      device.startProcess(`app_process / ${main}`, () => killed.push(main)),
    );
    try {
      // The device's pkill: `.` matches any character (toybox compiles the pattern as an ERE).
      const byRegex = await bed.device().shell(`pkill -f 'dev.devicebridge.glassagent.Mai[n]'`);
      expect(byRegex.exitCode).toBe(0);
      expect(killed.sort()).toEqual([MAIN, lookalike].sort());
      killed.length = 0;
      for (const main of [MAIN, lookalike])
        started.push(device.startProcess(`app_process / ${main}`, () => killed.push(main)));
      // The bridge's stop names the class itself: the lookalike lives.
      expect(await stopGlassAgentProcesses(bed.device(), [MAIN])).toBe(true);
      expect(killed).toEqual([MAIN]);
      // Several classes (the agent's releases over time) in one call.
      killed.length = 0;
      started.push(device.startProcess(`app_process / ${MAIN}`, () => killed.push(MAIN)));
      expect(await stopGlassAgentProcesses(bed.device(), [MAIN, older])).toBe(true);
      expect(killed.sort()).toEqual([MAIN, older].sort());
      expect(await stopGlassAgentProcesses(bed.device(), [MAIN, older])).toBe(false);
      expect(device.processes().map((p) => p.cmdline)).toEqual([`app_process / ${lookalike}`]);
    } finally {
      device.killMatching('.');
    }
  });

  it('the main classes of every published glass agent release, each once', async () => {
    const store = new FsArtifactStore(path.join(tmp.dir, 'releases'));
    const releases = new ReleaseRepository(store);
    expect(await glassAgentMainClasses(releases)).toEqual([]);
    await publishGlassAgent(store, tmp.dir, {
      version: '1.0.0',
      mainClass: 'com.fixedwidth.glassagent.Main',
    });
    await publishGlassAgent(store, tmp.dir, { version: '1.1.0', extra: ['a.B'] });
    await publishGlassAgent(store, tmp.dir, { version: '1.2.0', extra: ['a.C'] });
    expect((await glassAgentMainClasses(releases)).sort()).toEqual(
      ['com.fixedwidth.glassagent.Main', MAIN].sort(),
    );
  });

  it('pushes the jar once, starts, answers, and closes without leaving a forward or an agent', async () => {
    const first = await start();
    expect(first.start).toEqual({ pushed: true, killedStale: false });
    android().device.clipboard = 'on the device';
    expect(await first.agent.request('clipboard_get')).toMatchObject({ ok: true, text: 'on the device' });
    expect(await first.agent.request('clipboard_set', { text: 'Grüße 👋🏽' })).toMatchObject({ ok: true });
    expect(android().device.clipboard).toBe('Grüße 👋🏽');
    expect(bed.ledger.entries().filter((e) => e.owner === 'lease-a')).toHaveLength(1);
    await first.agent.close();
    expect(bed.ledger.entries().filter((e) => e.owner === 'lease-a')).toHaveLength(0);
    await expect.poll(agentListening, { timeout: 10_000 }).toBe(false);

    // Same bytes on the device: no push this time.
    const second = await start('lease-b');
    expect(second.start).toEqual({ pushed: false, killedStale: false });
    await second.agent.close();
    await expect.poll(agentListening, { timeout: 10_000 }).toBe(false);
  });

  it('kills a stale agent that holds the socket (a crashed bridge left it running)', async () => {
    const serial = bed.sim.devices[0]!.serial;
    const stale = await bed.client.shellStream(
      serial,
      `CLASSPATH=${manifest.devicePath} app_process / ${MAIN}`,
    );
    await expect.poll(agentListening, { timeout: 10_000 }).toBe(true);
    const { agent, start: how } = await start('lease-c');
    expect(how).toEqual({ pushed: false, killedStale: true });
    expect(await stale.exit).toBe(143); // the stale one was killed, not ours
    expect(await agent.request('ping')).toMatchObject({ ok: true });
    await agent.close();
  });

  it('an agent that died is started again by the next request (its connection is gone too)', async () => {
    const { agent } = await start('lease-d');
    const before = android()
      .device.processes()
      .map((p) => p.pid);
    expect(android().device.killMatching(MAIN)).toBe(1);
    await expect.poll(() => agent.running, { timeout: 10_000 }).toBe(false);
    expect(await agent.request('ping')).toMatchObject({ ok: true });
    expect(agent.running).toBe(true);
    const after = android()
      .device.processes()
      .map((p) => p.pid);
    expect(after).toHaveLength(1);
    expect(before).not.toContain(after[0]);
    await agent.close();
  });

  it('an agent that dies mid-request (glass-agent-death): the request fails retryable, the next one relaunches it', async () => {
    const { agent } = await start('lease-e');
    const [before] = android().device.processes();
    bed.sim.devices[0]!.setFault({ glassAgentDeath: true });
    const err = await agent.request('clipboard_get').catch((e: unknown) => e);
    // What the driver does today: the dropped connection is a typed, retryable error, not a silent retry.
    expect(err).toMatchObject({ name: 'BridgeError', code: 'UNAVAILABLE', retryable: true });
    expect((err as Error).message).toContain('glass-agent');
    expect(bed.sim.devices[0]!.faults.glassAgentDeath).toBeUndefined(); // one shot
    await expect.poll(() => agent.running, { timeout: 10_000 }).toBe(false);
    expect(await agent.request('ping')).toMatchObject({ ok: true });
    const after = android().device.processes();
    expect(after).toHaveLength(1);
    expect(after[0]!.pid).not.toBe(before!.pid);
    await agent.close();
    await expect.poll(agentListening, { timeout: 10_000 }).toBe(false);
  });

  it('an agent alive but no longer listening (glass-agent-deaf): the next request kills it and starts a new one', async () => {
    const { agent } = await start('lease-deaf');
    const [before] = android().device.processes();
    bed.sim.devices[0]!.setFault({ glassAgentDeaf: true });
    const err = await agent.request('clipboard_get').catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'BridgeError', code: 'UNAVAILABLE', retryable: true });
    expect(bed.sim.devices[0]!.faults.glassAgentDeaf).toBeUndefined(); // one shot
    // The fault itself: the process runs on, nothing listens.
    expect(
      android()
        .device.processes()
        .map((p) => p.pid),
    ).toEqual([before!.pid]);
    await expect.poll(agentListening, { timeout: 10_000 }).toBe(false);
    expect(agent.running).toBe(true);

    expect(await agent.request('ping')).toMatchObject({ ok: true });
    const after = android().device.processes();
    expect(after).toHaveLength(1);
    expect(after[0]!.pid).not.toBe(before!.pid);
    await agent.close();
    await expect.poll(agentListening, { timeout: 10_000 }).toBe(false);
    expect(android().device.processes()).toEqual([]);
  });

  it('a device whose processes outlive their shell (survive-hangup): close kills the agent, none left', async () => {
    bed.sim.devices[0]!.setFault({ surviveHangup: true });
    try {
      // The fault itself: a hang-up alone leaves the agent running, as on a real device.
      const serial = bed.sim.devices[0]!.serial;
      const orphan = await bed.client.shellStream(
        serial,
        `CLASSPATH=${manifest.devicePath} app_process / ${MAIN}`,
      );
      await expect.poll(agentListening, { timeout: 10_000 }).toBe(true);
      orphan.close();
      // A later command over the same transport: the device handled the hang-up (its CLSE) first.
      expect((await bed.client.shell(serial, 'echo after')).stdout.toString()).toBe('after\n');
      expect(android().device.processes()).toHaveLength(1);
      expect(agentListening()).toBe(true);
      expect(android().device.killMatching(MAIN)).toBe(1);

      const { agent } = await start('lease-g');
      expect(android().device.processes()).toHaveLength(1);
      await agent.close();
      expect(android().device.processes()).toEqual([]);
      await expect.poll(agentListening, { timeout: 10_000 }).toBe(false);
    } finally {
      bed.sim.devices[0]!.clearFault('surviveHangup');
    }
  });

  it('close() while a request relaunches the agent leaves no agent, forward or connection behind', async () => {
    const { agent } = await start('lease-f');
    expect(android().device.killMatching(MAIN)).toBe(1);
    await expect.poll(() => agent.running, { timeout: 10_000 }).toBe(false);
    // The request starts a relaunch; the lease ends while it is under way.
    const request = agent.request('ping').catch((e: unknown) => e);
    await agent.close();
    expect(await request).toMatchObject({ name: 'BridgeError', code: 'UNAVAILABLE' });
    expect(agent.running).toBe(false);
    expect(bed.ledger.entries().filter((e) => e.owner === 'lease-f')).toEqual([]);
    await expect.poll(() => android().device.processes().length, { timeout: 10_000 }).toBe(0);
    await expect.poll(agentListening, { timeout: 10_000 }).toBe(false);
  });
});
