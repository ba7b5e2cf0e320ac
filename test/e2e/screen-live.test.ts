/**
 * The live screen's real path end to end: a listening bridge driving a simulated device through the
 * real adb server, with no injected source — the room opens the device's own stream. With the glass
 * agent published (its jar has the encoder, ScreenMain) a viewer gets `start` with source `agent`
 * and a key frame that decodes, and a tap sent on the WebSocket shows in later frames; a pointer's
 * down and move show while it is still down (streamed to the agent's touch op), and with an agent
 * that has no such op the pointer goes as one gesture on up. With the
 * `screen-encoder-fail` fault the bridge falls back to `screenrecord`; with recordings cut short (the
 * `screenrecord-limit-s` fault) a viewer crosses the restarts and keeps decoding with no new `start`.
 * When the agent's encoder keeps crashing mid-stream (the `screen-encoder-die-after-s` fault) the
 * viewer sees no end: after the encoder's restarts screenrecord takes over and the pictures decode on.
 * The lease's release ends the view with `end` / `lease-ended`.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { loadConfig } from '../../src/config.ts';
import { type RunningNode, startNode } from '../../src/node/index.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { CLIENT_TOKEN, SHELL_TOKEN, tempDir, writeTokensFile } from '../support/bridge.ts';
import { freePort, GLASS_SCREEN_MAIN } from '../support/device-bed.ts';
import { bearerJson } from '../support/fleet.ts';
import { publishGlassA11y, publishGlassAgent } from '../support/glass.ts';
import { changedNear, redNear } from '../support/screen.ts';
import { connectViewer, decodeViewerPackets, Viewer } from '../support/screen-viewer.ts';
import { waitFor } from '../support/wait-for.ts';

const prefix = `test:${randomUUID()}:`;
let sim: Simulator;
let node: RunningNode;
let tmp: { dir: string; cleanup(): Promise<void> };
let store: FsArtifactStore;
const viewers: Viewer[] = [];
/** Leases a test acquired (released after it, if it did not). */
const leases = new Set<string>();

const api = (method: string, p: string, body?: unknown, token = CLIENT_TOKEN) =>
  bearerJson(node.url, token, method, p, body);

async function acquire(): Promise<string> {
  const lease = await api('POST', '/v1/leases', { ttlSeconds: 600 });
  expect(lease.status, JSON.stringify(lease.body)).toBe(201);
  leases.add(lease.body['id'] as string);
  return lease.body['id'] as string;
}

async function release(id: string): Promise<void> {
  leases.delete(id);
  expect((await api('DELETE', `/v1/leases/${id}`)).status).toBe(200);
}

async function view(id: string, query: string): Promise<Viewer> {
  const v = await connectViewer(node, { id, query });
  if (!(v instanceof Viewer)) throw new Error(`refused: ${JSON.stringify(v)}`);
  viewers.push(v);
  return v;
}

/** A tap on the device's display through the lease's shell (screenrecord shows only changes). */
async function tap(id: string, x: number, y: number): Promise<void> {
  const res = await api(
    'POST',
    `/v1/leases/${id}/shell`,
    { argv: ['input', 'tap', String(x), String(y)] },
    SHELL_TOKEN,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** screenrecord sends nothing until the screen changes: change it until a picture comes. */
async function firstPicture(id: string, v: Viewer): Promise<void> {
  await waitFor(
    async () => {
      if (v.frames().length > 0) return true;
      await tap(id, 800, 600);
      return false;
    },
    { what: 'a first picture', timeoutMs: 60_000, intervalMs: 200 },
  );
}

/**
 * Every frame the viewer got decodes, the last shows the tap at (800, 600) on the display — (107, 80)
 * in the 144×320 picture — and the release ends the view with lease-ended.
 */
async function decodesTapThenEnds(id: string, v: Viewer): Promise<void> {
  const frames = v.frames();
  const decoded = await decodeViewerPackets(frames, 144, 320);
  expect(decoded.frames.length, decoded.log).toBe(frames.length);
  expect(redNear(decoded, decoded.frames.length - 1, 107, 80, 6)).toBe(true);
  await release(id);
  await v.until(() => v.closed, 'the view closed');
  expect(v.messages.at(-1)).toMatchObject({ type: 'end', reason: 'lease-ended' });
}

const device = () => sim.devices[0]!;
const android = () => (device().android as SimAndroidHandle).device;
/** The streamed touches the glass agent injected (`touch` op events, oldest first). */
const touches = () =>
  android()
    .inputEvents()
    .filter((e) => e['type'] === 'glass-touch');
const screenrecords = () =>
  android()
    .processes()
    .filter((p) => p.cmdline.startsWith('screenrecord'));

beforeAll(async () => {
  sim = await startSimulator({ port: 0, count: 1 });
  tmp = await tempDir('devicebridge-screen-live-');
  store = new FsArtifactStore(path.join(tmp.dir, 'artifacts'));
  // The glass agent with its encoder mode, and the a11y service (the agent's input needs neither
  // more nor less than a published release).
  await publishGlassAgent(store, tmp.dir, { extra: [GLASS_SCREEN_MAIN] });
  await publishGlassA11y(store);
  const devices = path.join(tmp.dir, 'devices.json');
  await writeFile(devices, JSON.stringify([{ endpoint: device().address }]));
  const config = loadConfig(
    {
      DEVICEBRIDGE_DATA_DIR: tmp.dir,
      DEVICEBRIDGE_PORT: '0',
      DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(tmp.dir, { withShell: true }),
      DEVICEBRIDGE_DEVICES_FILE: devices,
      REDIS_URL: 'redis://127.0.0.1:6379',
      DEVICEBRIDGE_REDIS_PREFIX: prefix,
      DEVICEBRIDGE_NODE: 'screen-live',
      DEVICEBRIDGE_ADB_PORT: String(await freePort()),
      LOG_LEVEL: 'silent',
    },
    {},
  );
  node = await startNode(config);
  await waitFor(async () => (await api('GET', '/v1/devices')).body['devices']?.length === 1, {
    what: 'the bridge sees the simulated device',
    timeoutMs: 30_000,
  });
}, 120_000);

afterAll(async () => {
  await node?.close();
  await sim?.close();
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await tmp?.cleanup();
}, 60_000);

afterEach(async () => {
  for (const v of viewers.splice(0)) {
    if (v.closed) continue;
    v.ws.terminate();
    await v.until(() => v.closed, 'the viewer closed');
  }
  for (const id of leases) await release(id);
  device().clearFault();
  // Every lease's stream stopped: no screen process is left on the device.
  await waitFor(
    () =>
      !android()
        .processes()
        .some((p) => p.cmdline.includes('ScreenMain') || p.cmdline.startsWith('screenrecord')),
    { what: 'no screen process left on the device', timeoutMs: 30_000 },
  );
});

describe('the live screen from the device itself (e2e)', () => {
  it('the glass agent: start (agent), a key frame that decodes, a tap on the socket in later frames; release ends with lease-ended', async () => {
    const id = await acquire();
    const v = await view(id, '?maxSize=320&maxFps=10');
    await v.until(() => v.frames().length >= 3, 'three frames');
    expect(v.messages[0]).toEqual({
      type: 'start',
      codec: expect.stringMatching(/^avc1\.[0-9a-f]{6}$/),
      width: 144,
      height: 320,
      displayWidth: 1080,
      displayHeight: 2400,
      source: 'agent',
    });
    expect(v.messages[1]).toMatchObject({ type: 'packet', key: true });
    const got = v.frames();
    const first = await decodeViewerPackets(got, 144, 320);
    expect(first.frames.length, first.log).toBe(got.length);
    // (40, 200) in the picture is (300, 1500) on the display.
    const before = v.frames().length;
    v.send({ type: 'pointer', action: 'down', x: 40, y: 200 });
    v.send({ type: 'pointer', action: 'up', x: 40, y: 200 });
    await waitFor(() => touches().some((e) => e['action'] === 'up'), {
      what: 'the glass agent injected the tap',
      timeoutMs: 30_000,
    });
    const injected = v.frames().length;
    await v.until(() => v.frames().length >= injected + 5, 'frames after the tap');
    const frames = v.frames();
    const decoded = await decodeViewerPackets(frames, 144, 320);
    expect(decoded.frames.length, decoded.log).toBe(frames.length);
    expect(redNear(decoded, before - 1, 40, 200)).toBe(false);
    expect(redNear(decoded, decoded.frames.length - 1, 40, 200)).toBe(true);
    expect(v.messages.filter((m) => m.type === 'start')).toHaveLength(1);

    await release(id);
    await v.until(() => v.closed, 'the view closed');
    expect(v.messages.at(-1)).toMatchObject({ type: 'end', reason: 'lease-ended' });
  }, 120_000);

  it('a streamed pointer: its down, then its move, show in the picture while it is still down; the up ends it', async () => {
    const id = await acquire();
    const v = await view(id, '?maxSize=320&maxFps=10');
    await v.until(() => v.frames().length >= 3, 'three frames');
    const seen = touches().length;
    // (40, 200) in the picture is (300, 1500) on the display, (100, 60) is (750, 450).
    v.send({ type: 'pointer', action: 'down', x: 40, y: 200 });
    await waitFor(() => touches().length > seen, { what: 'the down injected', timeoutMs: 30_000 });
    expect(touches().slice(seen)).toEqual([{ type: 'glass-touch', action: 'down', x: 300, y: 1500 }]);
    const down = v.frames().length;
    await v.until(() => v.frames().length >= down + 5, 'frames after the down');
    let frames = v.frames();
    let decoded = await decodeViewerPackets(frames, 144, 320);
    expect(decoded.frames.length, decoded.log).toBe(frames.length);
    expect(redNear(decoded, 1, 100, 60)).toBe(false);
    expect(redNear(decoded, decoded.frames.length - 1, 40, 200)).toBe(true);
    expect(redNear(decoded, decoded.frames.length - 1, 100, 60)).toBe(false);

    v.send({ type: 'pointer', action: 'move', x: 100, y: 60 });
    await waitFor(() => touches().at(-1)?.['action'] === 'move', {
      what: 'the move injected',
      timeoutMs: 30_000,
    });
    expect(touches().at(-1)).toEqual({ type: 'glass-touch', action: 'move', x: 750, y: 450 });
    const moved = v.frames().length;
    await v.until(() => v.frames().length >= moved + 5, 'frames after the move');
    frames = v.frames();
    decoded = await decodeViewerPackets(frames, 144, 320);
    expect(decoded.frames.length, decoded.log).toBe(frames.length);
    expect(redNear(decoded, decoded.frames.length - 1, 100, 60)).toBe(true);
    // Nothing has gone up yet: the picture changed while the pointer was down.
    expect(
      touches()
        .slice(seen)
        .map((e) => e['action']),
    ).toEqual(['down', 'move']);

    v.send({ type: 'pointer', action: 'up', x: 100, y: 60 });
    await waitFor(() => touches().at(-1)?.['action'] === 'up', {
      what: 'the up injected',
      timeoutMs: 30_000,
    });
    expect(
      touches()
        .slice(seen)
        .map((e) => e['action']),
    ).toEqual(['down', 'move', 'up']);
    expect(v.messages.filter((m) => m.type === 'error')).toEqual([]);
    await release(id);
    await v.until(() => v.closed, 'the view closed');
  }, 120_000);

  it('the screen-encoder-fail fault: the source is screenrecord, its first picture decodes and shows the change', async () => {
    device().setFault({ screenEncoderFail: true });
    const id = await acquire();
    const v = await view(id, '?maxSize=320');
    await firstPicture(id, v);
    await v.until(() => v.frames().length >= 1, 'a frame');
    expect(v.messages[0]).toMatchObject({
      type: 'start',
      width: 144,
      height: 320,
      displayWidth: 1080,
      displayHeight: 2400,
      source: 'screenrecord',
    });
    expect(v.messages[1]).toMatchObject({ type: 'packet', key: true });
    await decodesTapThenEnds(id, v);
  }, 120_000);

  it('an encoder that keeps crashing (screen-encoder-die-after-s): no end, screenrecord takes over, one decodable stream', async () => {
    // Processes outlive their shell, as on a real device: only the bridge's kill stops them.
    device().setFault({ screenEncoderDieAfterS: 1, surviveHangup: true });
    const id = await acquire();
    const v = await view(id, '?maxSize=320&maxFps=10');
    await v.until(() => v.frames().length >= 1, 'a frame');
    expect(v.messages[0]).toMatchObject({ type: 'start', source: 'agent', width: 144, height: 320 });
    // Started again and crashing each time, until screenrecord is in its place.
    await waitFor(
      () =>
        v.closed ||
        (screenrecords().length === 1 &&
          !android()
            .processes()
            .some((p) => p.cmdline.includes('ScreenMain'))),
      { what: 'screenrecord in place of the encoder', timeoutMs: 60_000 },
    );
    const control = () => JSON.stringify(v.messages.filter((m) => m.type !== 'packet'));
    expect(v.closed, control()).toBe(false);
    const switched = v.frames().length;
    await waitFor(
      async () => {
        if (
          v.closed ||
          v
            .frames()
            .slice(switched)
            .some((f) => f.key)
        )
          return true;
        await tap(id, 800, 600);
        return false;
      },
      { what: "screenrecord's first picture", timeoutMs: 60_000, intervalMs: 300 },
    );
    expect(v.closed, control()).toBe(false);
    // No end, and a start again only for a change of the picture's size or codec.
    const starts = v.messages.filter((m) => m.type !== 'packet');
    expect(starts.filter((m) => m.type !== 'start')).toEqual([]);
    const shape = (m: unknown) => {
      const { width, height, displayWidth, displayHeight, codec } = m as Record<string, unknown>;
      return JSON.stringify([width, height, displayWidth, displayHeight, codec]);
    };
    for (let i = 1; i < starts.length; i++) {
      expect(shape(starts[i]), `start ${i} repeats the one before`).not.toBe(shape(starts[i - 1]));
    }
    await decodesTapThenEnds(id, v);
  }, 180_000);

  it('recordings cut short (screenrecord-limit-s): the viewer crosses the restarts, decoding on, with one start', async () => {
    device().setFault({ screenEncoderFail: true, screenrecordLimitS: 2 });
    const id = await acquire();
    const v = await view(id, '?maxSize=320');
    await firstPicture(id, v);
    const pids = new Set<number>();
    const taps: Array<{ x: number; y: number; after: number; lost?: boolean }> = [];
    for (let i = 0; ; i++) {
      for (const p of screenrecords()) pids.add(p.pid);
      // Three recordings seen (two restarts crossed) and a few taps after.
      if (pids.size >= 3 && taps.length > 6) break;
      if (i > 300) throw new Error(`${pids.size} recordings after 300 taps`);
      expect(v.closed, JSON.stringify(v.messages.filter((m) => m.type !== 'packet'))).toBe(false);
      const x = 100 + ((i * 97) % 880);
      const y = 300 + ((i * 211) % 1800);
      const seen = v.frames().length;
      const recordings = pids.size;
      await tap(id, x, y);
      taps.push({ x, y, after: seen });
      try {
        // A picture of this tap, or the view ended (the stream failed at a restart).
        await v.until(() => v.frames().length > seen || v.closed, `the picture of tap ${i}`, 3000);
      } catch (err) {
        // A change made between one recording's end and the next one's start shows with the next
        // change (screenrecord sends nothing for an unchanged screen).
        for (const p of screenrecords()) pids.add(p.pid);
        if (pids.size === recordings) throw err;
        taps.at(-1)!.lost = true;
      }
    }
    expect(v.messages.filter((m) => m.type !== 'packet')).toEqual([
      expect.objectContaining({ type: 'start', source: 'screenrecord', width: 144, height: 320 }),
    ]);
    const frames = v.frames();
    const decoded = await decodeViewerPackets(frames, 144, 320);
    expect(decoded.frames.length, decoded.log).toBe(frames.length);
    // The last taps show in the pictures that followed them.
    const last = taps.filter((t) => !t.lost).at(-2)!;
    const x = Math.round((last.x * 144) / 1080);
    const y = Math.round((last.y * 320) / 2400);
    let shown = false;
    for (let i = last.after; i < decoded.frames.length && !shown; i++)
      shown = changedNear(decoded, last.after - 1, i, x, y);
    expect(shown, `tap at ${last.x},${last.y}`).toBe(true);
    await release(id);
    await v.until(() => v.closed, 'the view closed');
    expect(v.messages.at(-1)).toMatchObject({ type: 'end', reason: 'lease-ended' });
  }, 180_000);

  it('a lease released with a pointer down: the finger is cancelled once, before the agent stops, and the teardown says so', async () => {
    const id = await acquire();
    const v = await view(id, '?maxSize=320&maxFps=10');
    await v.until(() => v.messages.some((m) => m.type === 'start'), 'start');
    const seen = touches().length;
    v.send({ type: 'pointer', action: 'down', x: 40, y: 200 });
    v.send({ type: 'pointer', action: 'move', x: 50, y: 210 });
    await waitFor(() => touches().at(-1)?.['action'] === 'move', {
      what: 'the move injected',
      timeoutMs: 30_000,
    });
    leases.delete(id);
    const released = await api('DELETE', `/v1/leases/${id}`);
    expect(released.status).toBe(200);
    const teardown = released.body['teardown'] as { actions: string[]; failures: string[] };
    expect(teardown.failures).toEqual([]);
    const serial = device().serial;
    const at = (action: string) => teardown.actions.indexOf(action);
    expect(at(`released the touch left down on ${serial}`)).toBeGreaterThanOrEqual(0);
    expect(at(`released the touch left down on ${serial}`)).toBeLessThan(
      at(`stopped glass agent on ${serial}`),
    );
    expect(touches().slice(seen)).toEqual([
      { type: 'glass-touch', action: 'down', x: 300, y: 1500 },
      { type: 'glass-touch', action: 'move', x: 375, y: 1575 },
      { type: 'glass-touch', action: 'cancel', x: 375, y: 1575 },
    ]);
    await v.until(() => v.closed, 'the view closed');
  }, 120_000);

  // Last: it publishes another agent release, which every later lease would start.
  it("an agent without the touch op (the glass contract's upstream agent): the pointer goes as one gesture on up, with its points, and shows", async () => {
    await publishGlassAgent(store, tmp.dir, {
      version: '2.0.0',
      mainClass: 'com.fixedwidth.glassagent.Main',
      extra: [GLASS_SCREEN_MAIN],
    });
    // The bridge reads the latest release again once its cached pointer has aged (another process published).
    await waitFor(
      async () => (await api('GET', '/v1/helpers/glass-agent/manifest')).body['version'] === '2.0.0',
      {
        what: 'the bridge sees the new agent release',
        timeoutMs: 30_000,
      },
    );
    const id = await acquire();
    const v = await view(id, '?maxSize=320&maxFps=10');
    await v.until(() => v.frames().length >= 3, 'three frames');
    const before = android().inputEvents().length;
    const gestures = () =>
      android()
        .inputEvents()
        .slice(before)
        .filter((e) => e['type'] === 'glass-pointer');
    v.send({ type: 'pointer', action: 'down', x: 40, y: 200 });
    v.send({ type: 'pointer', action: 'move', x: 60, y: 150 });
    v.send({ type: 'pointer', action: 'up', x: 60, y: 150 });
    await waitFor(() => gestures().length > 0, { what: 'the gesture injected', timeoutMs: 30_000 });
    const gesture = gestures()[0]!['gesture'] as Array<{ x: number; y: number }>;
    expect(gesture.map(({ x, y }) => [x, y])).toEqual([
      [300, 1500],
      [450, 1125],
      [450, 1125],
    ]);
    // The agent refused the touch op (nothing injected by it) and the viewer was not told of it.
    expect(
      android()
        .inputEvents()
        .slice(before)
        .filter((e) => e['type'] === 'glass-touch'),
    ).toEqual([]);
    const injected = v.frames().length;
    await v.until(() => v.frames().length >= injected + 5, 'frames after the gesture');
    const frames = v.frames();
    const decoded = await decodeViewerPackets(frames, 144, 320);
    expect(decoded.frames.length, decoded.log).toBe(frames.length);
    expect(redNear(decoded, decoded.frames.length - 1, 40, 200)).toBe(true);
    expect(v.messages.filter((m) => m.type === 'error')).toEqual([]);
    await release(id);
    await v.until(() => v.closed, 'the view closed');
  }, 120_000);
});
