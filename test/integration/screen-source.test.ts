/**
 * The host's live screen driver (openScreenSource) against simulated devices through the real adb
 * server: the glass agent's encoder (a `start`, then a decodable key frame; a tap shows in later
 * frames), the fallback to screenrecord when the agent cannot encode (an agent jar without the
 * encoder, the screen-encoder-fail fault), screenrecord's time limit crossed without a gap, the
 * agent's encoder dying mid-stream (started again, or screenrecord taking over, with no end and no
 * new `start` for an unchanged picture), an encoder left running by an earlier bridge stopped
 * before a stream starts, and close leaving no device process, no forward and no ffmpeg.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ereLiteral } from '../../src/helpers/glass/agent-driver.ts';
import { openScreenSource } from '../../src/helpers/screen/open.ts';
import { RecoveringScreenSource } from '../../src/helpers/screen/recovering-source.ts';
import { ScreenrecordSource } from '../../src/helpers/screen/screenrecord-source.ts';
import type { ScreenEvent, ScreenPacket, ScreenSource } from '../../src/helpers/screen/source.ts';
import type { AppProcessJarManifest } from '../../src/manifest/index.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { runningEncoders } from '../../src/simulator/android/screen/encoder.ts';
import { tempDir } from '../support/bridge.ts';
import {
  type DeviceBed,
  GLASS_AGENT_MAIN,
  GLASS_SCREEN_MAIN,
  glassAgentFixture,
  startDeviceBed,
} from '../support/device-bed.ts';
import { changedNear, decodeH264, redNear } from '../support/screen.ts';
import { waitFor } from '../support/wait-for.ts';

let bed: DeviceBed;
let tmp: { dir: string; cleanup(): Promise<void> };
let agent: { manifest: AppProcessJarManifest; jarPath: string };
let noEncoder: { manifest: AppProcessJarManifest; jarPath: string };
const android = () => bed.sim.devices[0]!.android as SimAndroidHandle;
const OWNER = 'lease-screen';

beforeAll(async () => {
  bed = await startDeviceBed();
  tmp = await tempDir();
  agent = await glassAgentFixture(tmp.dir);
  const dir = `${tmp.dir}/old`;
  await import('node:fs/promises').then((fs) => fs.mkdir(dir));
  const old = await glassAgentFixture(dir, GLASS_AGENT_MAIN, { screen: false });
  noEncoder = old;
}, 60_000);

afterAll(async () => {
  await bed?.close();
  await tmp?.cleanup();
});

afterEach(async () => {
  delete android().device.faults.screenEncoderFail;
  delete android().device.faults.screenrecordLimitS;
  delete android().device.faults.screenEncoderDieAfterS;
  delete android().device.faults.surviveHangup;
  // A failed test's source (and anything it left) is stopped, so the next test starts clean.
  for (const source of opened.splice(0)) await source.close();
  android().device.killMatching(ereLiteral(GLASS_SCREEN_MAIN));
  await waitFor(() => runningEncoders() === 0, { what: 'no ffmpeg left' });
});

/** The sources the running test opened (closed after it). */
const opened: ScreenSource[] = [];

/** Read a source's events as they come. */
function reader(source: ScreenSource) {
  opened.push(source);
  const events: ScreenEvent[] = [];
  let error: unknown = null;
  let done = false;
  void (async () => {
    try {
      for await (const e of source.events()) events.push(e);
    } catch (err) {
      error = err;
    }
    done = true;
  })();
  const packets = () =>
    events
      .filter((e): e is { type: 'packet'; packet: ScreenPacket } => e.type === 'packet')
      .map((e) => e.packet);
  return {
    events,
    packets,
    get error() {
      return error;
    },
    get done() {
      return done;
    },
  };
}

const decode = (packets: ScreenPacket[], width: number, height: number) =>
  decodeH264(Buffer.concat(packets.map((p) => p.data)), width, height);

/** Nothing of the stream is left on the device or in the ledger. */
async function expectClean(): Promise<void> {
  expect(bed.ledger.entries().filter((e) => e.owner === OWNER)).toEqual([]);
  await waitFor(
    () =>
      !android()
        .device.processes()
        .some((p) => p.cmdline.includes('ScreenMain') || p.cmdline.startsWith('screenrecord')),
    { what: 'no screen process on the device' },
  );
  await waitFor(() => runningEncoders() === 0, { what: 'no ffmpeg' });
}

describe('openScreenSource', () => {
  it('the glass agent: a start, a decodable key frame at once, a tap in later frames; close leaves nothing', async () => {
    const source = await openScreenSource(bed.device(), { owner: OWNER, agent, maxSize: 320, maxFps: 10 });
    const r = reader(source);
    await waitFor(() => r.packets().some((p) => p.key), { what: 'a key frame' });
    expect(r.events[0]).toMatchObject({
      type: 'start',
      info: {
        codec: 'h264',
        width: 144,
        height: 320,
        displayWidth: 1080,
        displayHeight: 2400,
        source: 'agent',
      },
    });
    const start = r.events[0] as Extract<ScreenEvent, { type: 'start' }>;
    expect(start.info.codecString).toMatch(/^avc1\.[0-9a-f]{6}$/);
    expect(r.packets()[0]).toMatchObject({ config: true, key: false });
    expect(bed.ledger.entries().filter((e) => e.owner === OWNER)).toHaveLength(1);

    const before = r.packets().length;
    // (300, 1500) on the display is (40, 200) in the picture.
    await bed.device().shell('input tap 300 1500');
    await waitFor(() => r.packets().length > before + 8, { what: 'frames after the tap' });
    await source.close();
    await waitFor(() => r.done, { what: 'events() ended' });
    expect(r.error).toBeNull();
    const packets = r.packets();
    const decoded = await decode(packets, 144, 320);
    expect(decoded.frames.length, decoded.log).toBe(packets.filter((p) => !p.config).length);
    expect(redNear(decoded, 0, 40, 200)).toBe(false);
    expect(redNear(decoded, decoded.frames.length - 1, 40, 200)).toBe(true);
    await expectClean();
  });

  it.each([
    ['an agent jar without the encoder', () => noEncoder, () => undefined],
    [
      'the screen-encoder-fail fault',
      () => agent,
      () => {
        android().device.faults.screenEncoderFail = true;
      },
    ],
  ])(
    'falls back to screenrecord with %s: a start at the first change, decodable, showing it',
    async (_name, jar, fault) => {
      fault();
      const source = await openScreenSource(bed.device(), { owner: OWNER, agent: jar(), maxSize: 320 });
      const r = reader(source);
      expect(source).toBeInstanceOf(ScreenrecordSource);
      // (800, 600) on the display is (106, 80) in the picture.
      await bed.device().shell('input tap 800 600');
      await waitFor(() => r.packets().some((p) => p.key), { what: 'a key frame' });
      expect(r.events[0]).toMatchObject({
        type: 'start',
        info: { width: 144, height: 320, displayWidth: 1080, displayHeight: 2400, source: 'screenrecord' },
      });
      const decoded = await decode(r.packets(), 144, 320);
      expect(decoded.frames.length, decoded.log).toBeGreaterThan(0);
      expect(redNear(decoded, 0, 106, 80)).toBe(true);
      await source.close();
      await expectClean();
    },
  );

  it.each([
    [
      "screenrecord's time limit",
      {
        // The lead must outlast a loaded machine's encoder start: a change the old recording has not
        // sent when it ends, made before the next one started, shows only at the next change.
        screenrecordTimeLimitS: 4,
        screenrecordRestartLeadMs: 2000,
      },
    ],
    [
      // A device whose screenrecord stops long before its --time-limit (the fault cuts at 3 s).
      'recordings that end early (screenrecord-limit-s)',
      {},
    ],
  ])('crosses %s: the next recording takes over, one decodable stream', async (name, limits) => {
    if (name.includes('early')) android().device.faults.screenrecordLimitS = 3;
    const source = await openScreenSource(bed.device(), { owner: OWNER, maxSize: 320, ...limits });
    const sr = source as ScreenrecordSource;
    const r = reader(source);
    // Change the screen, wait for the picture of each change, until two switches are behind us.
    const taps: Array<{ x: number; y: number; after: number; lost?: boolean }> = [];
    for (let i = 0; ; i++) {
      const x = 100 + ((i * 97) % 880);
      const y = 300 + ((i * 211) % 1800);
      const seen = r.packets().length;
      const switches = sr.switches;
      await bed.device().shell(`input tap ${x} ${y}`);
      taps.push({ x, y, after: seen });
      try {
        await waitFor(() => r.packets().length > seen, {
          what: `the picture of tap ${i}`,
          timeoutMs: name.includes('early') ? 3000 : 10_000,
        });
      } catch (err) {
        // A change made between a recording's early end and the next one's start shows only with
        // the next change (screenrecord sends nothing for an unchanged screen): tap again.
        if (!name.includes('early') || sr.switches === switches) throw err;
        taps.at(-1)!.lost = true;
      }
      if (sr.switches >= 2 && taps.length > 12) break;
      if (i > 200) throw new Error('no switch after 200 taps');
    }
    await source.close();
    expect(r.error).toBeNull();
    expect(sr.switches).toBeGreaterThanOrEqual(2);
    // One `start`: the size never changed.
    expect(r.events.filter((e) => e.type === 'start')).toHaveLength(1);
    const packets = r.packets();
    const pts = packets.map((p) => p.pts);
    expect(pts.every((t, i) => i === 0 || t >= (pts[i - 1] as number))).toBe(true);
    // One decodable stream across the switches: every picture decodes...
    const decoded = await decode(packets, 144, 320);
    const pictures = packets.filter((p) => !p.config);
    expect(decoded.frames.length, decoded.log).toBe(pictures.length);
    // ...and every tap shows in a picture that soon followed it (no change was lost at a switch; at
    // a switch the next recording's key frame may repeat the picture before the tap).
    const pictureIndex = (packetIndex: number) =>
      packets.slice(0, packetIndex).filter((p) => !p.config).length;
    for (const [k, tap] of taps.entries()) {
      const at = pictureIndex(tap.after);
      // The first tap has no picture before it; the last one's picture may still be on its way (a
      // switch's key frame, showing the screen before it, may have answered its wait).
      if (at === 0 || k === taps.length - 1 || tap.lost) continue;
      // Up to two pictures past the next tap's first (a stale repeat may have answered the wait).
      const until = Math.min(
        decoded.frames.length - 1,
        (k + 1 < taps.length ? pictureIndex(taps[k + 1]!.after) : at) + 2,
      );
      const x = Math.round((tap.x * 144) / 1080);
      const y = Math.round((tap.y * 320) / 2400);
      let shown = false;
      for (let i = at; i <= until && !shown; i++) shown = changedNear(decoded, at - 1, i, x, y);
      expect(shown, `tap at ${tap.x},${tap.y} in pictures ${at} to ${until}`).toBe(true);
    }
    await expectClean();
  });
});

const screenMains = () =>
  android()
    .device.processes()
    .filter((p) => p.cmdline.includes(GLASS_SCREEN_MAIN));
const screenrecords = () =>
  android()
    .device.processes()
    .filter((p) => p.cmdline.startsWith('screenrecord'));

/** Every `start` after the first tells of a change of the picture's size or codec. */
function expectStartsOnlyOnChange(events: ScreenEvent[]): void {
  const starts = events.filter((e): e is Extract<ScreenEvent, { type: 'start' }> => e.type === 'start');
  for (const [i, s] of starts.entries()) {
    if (i === 0) continue;
    const before = starts[i - 1]!.info;
    expect(
      s.info.width !== before.width ||
        s.info.height !== before.height ||
        s.info.codecString !== before.codecString,
      `start ${i} repeats ${JSON.stringify(before)}`,
    ).toBe(true);
  }
}

/** The packets make one stream: presentation times never go back, and every picture decodes. */
async function expectOneStream(packets: ScreenPacket[]): Promise<void> {
  const pts = packets.map((p) => p.pts);
  expect(pts.every((t, i) => i === 0 || t >= (pts[i - 1] as number))).toBe(true);
  const decoded = await decode(packets, 144, 320);
  expect(decoded.frames.length, decoded.log).toBe(packets.filter((p) => !p.config).length);
}

describe('the glass agent encoder dying mid-stream', () => {
  it('killed: it is started again and the stream goes on, with no end and no new start', async () => {
    // A real device's processes outlive their shell: only a kill stops them.
    android().device.faults.surviveHangup = true;
    const source = await openScreenSource(bed.device(), { owner: OWNER, agent, maxSize: 320, maxFps: 10 });
    const r = reader(source);
    await waitFor(() => r.packets().some((p) => p.key), { what: 'a key frame' });
    const [first] = screenMains();
    expect(first).toBeDefined();
    expect(android().device.killMatching(ereLiteral(GLASS_SCREEN_MAIN))).toBe(1);
    const cut = r.packets().length;
    await waitFor(
      () =>
        r
          .packets()
          .slice(cut)
          .filter((p) => p.key).length >= 2 || r.done,
      {
        what: 'key frames from the encoder started again',
        timeoutMs: 20_000,
      },
    );
    expect(r.error).toBeNull();
    expect(r.done).toBe(false);
    const now = screenMains();
    expect(now).toHaveLength(1);
    expect(now[0]!.pid).not.toBe(first!.pid);
    expect(r.events.filter((e) => e.type === 'start')).toHaveLength(1);
    expect(bed.ledger.entries().filter((e) => e.owner === OWNER)).toHaveLength(1);
    expect(source).toBeInstanceOf(RecoveringScreenSource);
    expect((source as RecoveringScreenSource).restarts).toBe(1);
    expect((source as RecoveringScreenSource).kind).toBe('agent');
    await source.close();
    await waitFor(() => r.done, { what: 'events() ended' });
    expect(r.error).toBeNull();
    await expectOneStream(r.packets());
    await expectClean();
  });

  it.each([
    [
      'keeps dying (screen-encoder-die-after-s)',
      // Started again twice (the bound), dying each time.
      2,
      () => {
        android().device.faults.screenEncoderDieAfterS = 1;
      },
      () => undefined,
    ],
    [
      'cannot be started again (killed, then screen-encoder-fail)',
      1,
      () => undefined,
      () => {
        android().device.faults.screenEncoderFail = true;
        expect(android().device.killMatching(ereLiteral(GLASS_SCREEN_MAIN))).toBe(1);
      },
    ],
  ])(
    'an encoder that %s: screenrecord takes over, the stream goes on',
    async (_name, restarts, before, cut) => {
      android().device.faults.surviveHangup = true;
      before();
      const source = await openScreenSource(bed.device(), { owner: OWNER, agent, maxSize: 320, maxFps: 10 });
      const r = reader(source);
      await waitFor(() => r.packets().some((p) => p.key), { what: 'a key frame' });
      expect(r.events[0]).toMatchObject({ type: 'start', info: { source: 'agent' } });
      cut();
      await waitFor(() => (screenMains().length === 0 && screenrecords().length === 1) || r.done, {
        what: 'screenrecord in place of the encoder',
        timeoutMs: 30_000,
      });
      expect(r.error).toBeNull();
      expect(r.done).toBe(false);
      // screenrecord sends a picture once the screen changes.
      const switched = r.packets().length;
      await waitFor(
        async () => {
          if (
            r.done ||
            r
              .packets()
              .slice(switched)
              .some((p) => p.key)
          )
            return true;
          await bed.device().shell('input tap 800 600');
          return false;
        },
        { what: "screenrecord's first key frame", timeoutMs: 30_000, intervalMs: 300 },
      );
      expect(r.error).toBeNull();
      expect(r.done).toBe(false);
      expectStartsOnlyOnChange(r.events);
      expect(screenMains()).toEqual([]);
      expect((source as RecoveringScreenSource).restarts).toBe(restarts);
      expect((source as RecoveringScreenSource).kind).toBe('screenrecord');
      await source.close();
      await waitFor(() => r.done, { what: 'events() ended' });
      expect(r.error).toBeNull();
      await expectOneStream(r.packets());
      // (800, 600) on the display is (107, 80) in the picture.
      const decoded = await decode(r.packets(), 144, 320);
      expect(redNear(decoded, decoded.frames.length - 1, 107, 80, 6)).toBe(true);
      await expectClean();
    },
  );
});

describe('the device going away mid-stream', () => {
  it('a cable pull ends the stream with DEVICE_OFFLINE; screenrecord is not tried', async () => {
    const source = await openScreenSource(bed.device(), { owner: OWNER, agent, maxSize: 320, maxFps: 10 });
    const r = reader(source);
    await waitFor(() => r.packets().some((p) => p.key), { what: 'a key frame' });
    const sim = bed.sim.devices[0]!;
    sim.unplug();
    try {
      await waitFor(() => r.done, { what: 'the stream ended', timeoutMs: 30_000 });
      expect(r.error).toMatchObject({ code: 'DEVICE_OFFLINE' });
      expect((source as RecoveringScreenSource).kind).toBe('agent');
      expect(screenrecords()).toEqual([]);
    } finally {
      sim.plug();
      await waitFor(async () => (await bed.device().shell('true', { timeoutMs: 2000 })).exitCode === 0, {
        what: 'the device back',
        timeoutMs: 30_000,
        intervalMs: 200,
      });
    }
    await source.close();
    await expectClean();
  });
});

describe('an encoder left running on the device', () => {
  it("an earlier stream's encoder (a crashed bridge, a lost connection) is stopped before a stream starts; others are not", async () => {
    android().device.faults.surviveHangup = true;
    await bed.device().push(agent.jarPath, agent.manifest.devicePath);
    const serial = bed.sim.devices[0]!.serial;
    const run = (socket: string) =>
      bed.client.shellStream(
        serial,
        `CLASSPATH=${agent.manifest.devicePath} app_process / ${GLASS_SCREEN_MAIN} --socket ${socket} --max-size 320`,
      );
    const stale = await run('devicebridge-screen-0badc0de');
    const other = await run('someone-elses-screen');
    await waitFor(() => android().listening().includes('localabstract:devicebridge-screen-0badc0de'), {
      what: 'the stale encoder listening',
    });
    // Its bridge lost the connection: the shell hung up, the process stays (a real device's way).
    stale.close();
    await waitFor(() => android().listening().includes('localabstract:someone-elses-screen'), {
      what: 'the other encoder listening',
    });
    expect(screenMains()).toHaveLength(2);

    const source = await openScreenSource(bed.device(), { owner: OWNER, agent, maxSize: 320, maxFps: 10 });
    const r = reader(source);
    await waitFor(() => r.packets().some((p) => p.key), { what: 'a key frame' });
    const left = screenMains().map((p) => p.cmdline);
    expect(left.filter((c) => c.includes('devicebridge-screen-0badc0de'))).toEqual([]);
    expect(left.filter((c) => c.includes('someone-elses-screen'))).toHaveLength(1);
    expect(left).toHaveLength(2);
    await source.close();
    await waitFor(() => screenMains().length === 1, { what: 'ours stopped' });
    expect(screenMains()[0]!.cmdline).toContain('someone-elses-screen');
    other.close();
    android().device.killMatching('someone-elses-screen');
    await expectClean();
  });
});
