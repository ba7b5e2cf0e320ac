/**
 * The live screen through real listening bridges: two nodes on one Redis key prefix, a simulated
 * device driven by node A (its real glass agent fixture through the real adb server), a device
 * stream of real H.264 (ffmpeg's libx264 test pattern, test/support/screen-source.ts) as the
 * device's screen source. A viewer gets `start` and a key frame (SPS/PPS first) at once, on the
 * owner or relayed by node B; a stalled viewer skips to a key frame while another keeps every frame;
 * the viewer cap and the other refusals are HTTP answers to the upgrade; input reaches the glass
 * agent (a tap at display coordinates, text in the a11y tree); `devicebridge screen` writes a file
 * ffprobe reads as H.264; the lease's end sends `end` with `lease-ended` to every viewer.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FsArtifactStore } from '../../src/artifacts/fs-store.ts';
import { loadConfig } from '../../src/config.ts';
import type { ScreenPacket, ScreenStreamOptions } from '../../src/helpers/screen/source.ts';
import type { LeaseTarget } from '../../src/lease-session/index.ts';
import { type RunningNode, startNode } from '../../src/node/index.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { CLIENT_TOKEN, OTHER_TENANT_TOKEN, tempDir, writeTokensFile } from '../support/bridge.ts';
import { runCli } from '../support/cli.ts';
import { type A11yTreeNode, flattenA11yTree, freePort } from '../support/device-bed.ts';
import { bearerJson } from '../support/fleet.ts';
import { publishGlassFixtures } from '../support/glass.ts';
import { encodeTestStream, splitAccessUnits, TestScreenSource } from '../support/screen-source.ts';
import { type ConnectOptions, connectViewer, Viewer } from '../support/screen-viewer.ts';
import { waitFor } from '../support/wait-for.ts';

const run = promisify(execFile);
const prefix = `test:${randomUUID()}:`;
const INFO = {
  codec: 'h264' as const,
  width: 720,
  height: 1280,
  displayWidth: 1080,
  displayHeight: 2400,
  source: 'agent' as const,
};
const MAX_VIEWERS = 3;

let sim: Simulator;
let a: RunningNode;
let b: RunningNode;
let packets: ScreenPacket[];
let leaseId: string;
const dirs: Array<{ cleanup(): Promise<void> }> = [];
const opened: Array<{ options: ScreenStreamOptions; source: TestScreenSource }> = [];
/** Awaited by the playing source before each frame (tests pace it by what a viewer got). */
let pace: (frame: number) => Promise<void> = () => new Promise((r) => setTimeout(r, 5));

async function startBridgeNode(name: string, env: Record<string, string>): Promise<RunningNode> {
  const tmp = await tempDir(`devicebridge-screen-${name}-`);
  dirs.push(tmp);
  const config = loadConfig(
    {
      DEVICEBRIDGE_DATA_DIR: tmp.dir,
      DEVICEBRIDGE_PORT: '0',
      DEVICEBRIDGE_TOKENS_FILE: await writeTokensFile(tmp.dir),
      REDIS_URL: 'redis://127.0.0.1:6379',
      DEVICEBRIDGE_REDIS_PREFIX: prefix,
      DEVICEBRIDGE_NODE: name,
      DEVICEBRIDGE_ADB_PORT: String(await freePort()),
      DEVICEBRIDGE_SCREEN_MAX_VIEWERS: String(MAX_VIEWERS),
      DEVICEBRIDGE_SCREEN_VIEWER_QUEUE_BYTES: String(256 * 1024),
      LOG_LEVEL: 'silent',
      ...(name === 'screen-a' ? await deviceEnv(tmp.dir) : {}),
      ...env,
    },
    {},
  );
  return startNode(config, {
    openScreenSource: async (_target: LeaseTarget, options: ScreenStreamOptions) => {
      const source = new TestScreenSource(INFO, packets, { pace: (i) => pace(i) });
      opened.push({ options, source });
      return source;
    },
  });
}

/** Node A's devices file (the simulated device) and its glass fixtures. */
async function deviceEnv(dir: string): Promise<Record<string, string>> {
  await publishGlassFixtures(new FsArtifactStore(path.join(dir, 'artifacts')), dir);
  const file = path.join(dir, 'devices.json');
  await writeFile(file, JSON.stringify([{ endpoint: sim.devices[0]!.address }]));
  return { DEVICEBRIDGE_DEVICES_FILE: file };
}

const api = (node: RunningNode, method: string, p: string, body?: unknown) =>
  bearerJson(node.url, CLIENT_TOKEN, method, p, body);

/** Every viewer opened (closed after each test). */
const viewers: Viewer[] = [];

/** Open the lease's screen on `node`: the viewer, or the refusal's status and error body. */
async function connect(node: RunningNode, options: Omit<ConnectOptions, 'id'> & { id?: string } = {}) {
  const v = await connectViewer(node, { ...options, id: options.id ?? leaseId });
  if (v instanceof Viewer) viewers.push(v);
  return v;
}

async function viewer(node: RunningNode, query?: string): Promise<Viewer> {
  const v = await connect(node, query === undefined ? {} : { query });
  if (!(v instanceof Viewer)) throw new Error(`refused: ${JSON.stringify(v)}`);
  return v;
}

const close = (v: Viewer) => v.close();

beforeAll(async () => {
  packets = splitAccessUnits(await encodeTestStream({ frames: 60, gop: 30, noise: 6 }));
  sim = await startSimulator({ port: 0, count: 1 });
  a = await startBridgeNode('screen-a', {});
  b = await startBridgeNode('screen-b', {});
  await waitFor(async () => (await api(b, 'GET', '/v1/devices')).body.devices?.length === 1, {
    what: 'node B sees the device node A drives',
    timeoutMs: 30_000,
  });
  const lease = await api(b, 'POST', '/v1/leases', { ttlSeconds: 600 });
  expect(lease.status, JSON.stringify(lease.body)).toBe(201);
  leaseId = lease.body.id;
}, 120_000);

afterAll(async () => {
  await b?.close();
  await a?.close();
  await sim?.close();
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  for (const d of dirs) await d.cleanup();
}, 60_000);

describe('the live screen over WebSockets (e2e)', () => {
  afterEach(async () => {
    // A failed test may leave a viewer paused (it would never read the close handshake): cut.
    for (const v of viewers.splice(0)) {
      if (v.closed) continue;
      v.ws.terminate();
      await v.until(() => v.closed, 'the viewer closed');
    }
    pace = () => new Promise((r) => setTimeout(r, 5));
  });

  it('the test stream is real H.264 cut into access units: a config, key frames every 30 frames', () => {
    expect(packets[0]).toMatchObject({ config: true });
    const frames = packets.filter((p) => !p.config);
    expect(frames).toHaveLength(60);
    expect(frames.map((f, i) => (f.key ? i : -1)).filter((i) => i >= 0)).toEqual([0, 30]);
  });

  it('a viewer gets start, then a key frame with the SPS/PPS before it; its query started the device stream', async () => {
    const v = await viewer(a, '?maxSize=800&maxFps=20');
    await v.until(() => v.frames().length >= 3, 'three frames');
    expect(opened.map((o) => o.options)).toEqual([{ maxSize: 800, maxFps: 20 }]);
    expect(v.messages[0]).toEqual({
      type: 'start',
      codec: expect.stringMatching(/^avc1\.42[0-9a-f]{4}$/),
      width: 720,
      height: 1280,
      displayWidth: 1080,
      displayHeight: 2400,
      source: 'agent',
    });
    const first = v.messages[1]!;
    expect(first.type).toBe('packet');
    if (first.type !== 'packet') return;
    expect(first.key).toBe(true);
    // 00 00 00 01, then the SPS's NAL header.
    expect([...first.data.subarray(0, 5)]).toEqual([0, 0, 0, 1, 0x67]);
    // A second viewer, relayed by node B, joins the running stream: start and a key frame first too.
    const relayed = await viewer(b, '?maxSize=300');
    await relayed.until(() => relayed.frames().length >= 2, 'two relayed frames');
    expect(relayed.messages[0]).toMatchObject({ type: 'start', width: 720 });
    expect(relayed.messages[1]).toMatchObject({ type: 'packet', key: true });
    expect(opened).toHaveLength(1);
    await close(v);
    await close(relayed);
  });

  it('a stalled viewer skips to the next key frame; the other viewer gets every frame meanwhile', async () => {
    const fast = await viewer(a);
    const stalled = await viewer(b);
    await stalled.until(() => stalled.frames().length >= 1, 'the stalled viewer got a first frame');
    stalled.ws.pause();
    const source = opened.at(-1)!.source;
    const room = a.node!.room;
    // Pace the device by the fast viewer: each frame once the fast one has the one before.
    // (Before this the stream ran at its own pace: on a loaded machine the fast viewer may have
    // skipped too, as it should have. From here on it keeps up by construction.)
    const paced = fast.messages.length;
    const base = source.framesPlayed - fast.frames().length;
    pace = async (i) => fast.until(() => fast.frames().length + base >= i, `the fast viewer got frame ${i}`);
    await waitFor(() => room.screen.stats(leaseId).some((s) => s.framesSkipped > 0), {
      what: "the stalled viewer's queue skipped frames",
      timeoutMs: 60_000,
    });
    const meanwhile = fast.messages.slice(paced);
    expect(meanwhile.filter((m) => m.type === 'skipped')).toEqual([]);
    const pts = meanwhile.filter((m) => m.type === 'packet').map((f) => f.pts);
    // Consecutive frames: each 1/30 s after the one before (the source loops with growing times).
    for (let i = 1; i < pts.length; i++) expect(pts[i]! - pts[i - 1]!).toBeLessThanOrEqual(33_334 * 2);
    expect(pts.length).toBeGreaterThan(10);
    stalled.ws.resume();
    await stalled.until(() => {
      const at = stalled.messages.findIndex((m) => m.type === 'skipped');
      return at !== -1 && stalled.messages.length > at + 1;
    }, 'the stalled viewer got skipped and the message after it');
    const at = stalled.messages.findIndex((m) => m.type === 'skipped');
    expect(stalled.messages[at]).toMatchObject({ type: 'skipped', frames: expect.any(Number) });
    expect(stalled.messages[at + 1]).toMatchObject({ type: 'packet', key: true });
    pace = () => new Promise((r) => setTimeout(r, 5));
    await close(fast);
    await close(stalled);
  }, 120_000);

  it('refuses with HTTP answers: the cap (429 naming it, relayed too), no token, another tenant, another origin, no upgrade', async () => {
    const viewers = [];
    for (let i = 0; i < MAX_VIEWERS; i++) viewers.push(await viewer(i % 2 === 0 ? a : b));
    for (const node of [a, b]) {
      const refused = await connect(node);
      expect(refused).toMatchObject({ status: 429, body: { error: { code: 'RATE_LIMITED' } } });
      if (!(refused instanceof Viewer)) {
        expect(refused.body.error.message).toContain(`DEVICEBRIDGE_SCREEN_MAX_VIEWERS=${MAX_VIEWERS}`);
      }
    }
    for (const v of viewers) await close(v);
    expect(await connect(a, { token: null })).toMatchObject({
      status: 401,
      body: { error: { code: 'UNAUTHENTICATED' } },
    });
    expect(await connect(b, { token: OTHER_TENANT_TOKEN })).toMatchObject({
      status: 404,
      body: { error: { code: 'NOT_FOUND' } },
    });
    expect(await connect(a, { headers: { Origin: 'https://evil.example' } })).toMatchObject({
      status: 403,
      body: { error: { code: 'CROSS_SITE_REQUEST' } },
    });
    // The bridge's own origin is fine.
    const own = await connect(a, { headers: { Origin: a.url } });
    expect(own).toBeInstanceOf(Viewer);
    await close(own as Viewer);
    const plain = await api(a, 'GET', `/v1/leases/${leaseId}/screen`);
    expect(plain.status).toBe(400);
    expect(plain.body.error.message).toContain('Upgrade: websocket');
  });

  it('input reaches the glass agent: a tap mapped to the display, text typed into the focused field', async () => {
    const v = await viewer(b);
    await v.until(() => v.messages.some((m) => m.type === 'start'), 'start');
    v.send({ type: 'pointer', action: 'down', x: 360, y: 640 });
    v.send({ type: 'pointer', action: 'up', x: 360, y: 640 });
    v.send({ type: 'text', text: ' Grüße 👋🏽' });
    v.send({ type: 'key', key: 'no-such-key' });
    await v.until(() => v.messages.some((m) => m.type === 'error'), 'the error for the bad key');
    expect(v.messages.find((m) => m.type === 'error')).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const device = sim.devices[0]!.android.device as unknown as {
      inputEvents(): Array<Record<string, unknown>>;
    };
    const touches = () => device.inputEvents().filter((e) => e['type'] === 'glass-touch');
    await waitFor(() => touches().some((e) => e['action'] === 'up'), {
      what: 'the glass agent injected the tap',
      timeoutMs: 30_000,
    });
    expect(touches().map((e) => [e['action'], e['x'], e['y']])).toEqual([
      ['down', 540, 1200],
      ['up', 540, 1200],
    ]);
    await waitFor(() => device.inputEvents().some((e) => e['type'] === 'glass-text'), {
      what: 'the glass agent typed the text',
      timeoutMs: 30_000,
    });
    const tree = await api(a, 'GET', `/v1/leases/${leaseId}/a11y/tree`);
    expect(tree.status, JSON.stringify(tree.body)).toBe(200);
    const texts = flattenA11yTree(tree.body['root'] as A11yTreeNode).map((n) => n.text);
    expect(texts.some((t) => t?.endsWith(' Grüße 👋🏽'))).toBe(true);
    await close(v);
  }, 90_000);

  it('devicebridge screen writes a raw H.264 file that ffprobe reads', async () => {
    const tmp = await tempDir('devicebridge-screen-cli-');
    dirs.push(tmp);
    const file = path.join(tmp.dir, 'screen.h264');
    const result = await runCli(['screen', '--lease', leaseId, '--seconds', '2', '-o', file, '--json'], {
      env: { DEVICEBRIDGE_URL: b.url, DEVICEBRIDGE_TOKEN: CLIENT_TOKEN },
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { frames: number; bytes: number; width: number };
    expect(summary).toMatchObject({ file, width: 720, height: 1280 });
    expect(summary.frames).toBeGreaterThan(0);
    expect((await readFile(file)).byteLength).toBe(summary.bytes);
    const probe = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_name,width,height',
      '-of',
      'json',
      file,
    ]);
    expect(JSON.parse(probe.stdout).streams[0]).toMatchObject({
      codec_name: 'h264',
      width: 720,
      height: 1280,
    });
  }, 90_000);

  it('the lease ending sends end with lease-ended to every viewer, on the owner and relayed, and closes', async () => {
    const direct = await viewer(a);
    const relayed = await viewer(b);
    await relayed.until(() => relayed.frames().length > 0, 'a relayed frame');
    expect((await api(b, 'DELETE', `/v1/leases/${leaseId}`)).status).toBe(200);
    for (const v of [direct, relayed]) {
      await v.until(() => v.closed, 'the viewer was closed');
      expect(v.messages.at(-1)).toMatchObject({ type: 'end', reason: 'lease-ended' });
    }
    await waitFor(() => opened.every((o) => o.source.closed), { what: 'every device stream stopped' });
    // The ended lease is refused.
    expect(await connect(a)).toMatchObject({ status: 410, body: { error: { code: 'LEASE_EXPIRED' } } });
  }, 60_000);
});
