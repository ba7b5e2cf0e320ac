/**
 * The simulator's live screen through the real adb server: `screenrecord --output-format=h264 -`
 * over exec (nothing until the screen changes, black borders for another aspect ratio, the time
 * limit and its fault, AOSP's argument errors) and the glass agent's encoder mode (`app_process …
 * ScreenMain`: the framing on its socket, a picture at once, a tap in later frames, one client, the
 * encoder-fail fault). Pictures are checked by decoding them with ffmpeg. No ffmpeg is left behind.
 */
import type { Duplex } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AnnexBSplitter } from '../../src/protocol/screen/annexb.ts';
import { type ScreenFrame, ScreenFrameDecoder } from '../../src/protocol/screen/framing.ts';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import { runningEncoderPids, runningEncoders } from '../../src/simulator/android/screen/encoder.ts';
import { tempDir } from '../support/bridge.ts';
import {
  type DeviceBed,
  GLASS_SCREEN_MAIN,
  glassAgentFixture,
  startDeviceBed,
} from '../support/device-bed.ts';
import { type DecodedFrames, decodeH264, pixelAt } from '../support/screen.ts';
import { waitFor } from '../support/wait-for.ts';

let bed: DeviceBed;
let tmp: { dir: string; cleanup(): Promise<void> };
let devicePath: string;
const android = () => bed.sim.devices[0]!.android as SimAndroidHandle;
const serial = () => bed.sim.devices[0]!.serial;

beforeAll(async () => {
  bed = await startDeviceBed();
  tmp = await tempDir();
  const { jarPath, manifest } = await glassAgentFixture(tmp.dir);
  devicePath = manifest.devicePath;
  await bed.device().push(jarPath, devicePath);
}, 60_000);

afterAll(async () => {
  await bed?.close();
  await tmp?.cleanup();
});

afterEach(async () => {
  const faults = android().device.faults;
  delete faults.screenrecordLimitS;
  delete faults.screenEncoderFail;
  delete faults.screenEncoderDieAfterS;
  // Every stream's ffmpeg is gone once its stream ended.
  const pids = runningEncoderPids();
  await waitFor(() => runningEncoders() === 0, { what: `no encoder left (pids ${pids.join(', ')})` });
  for (const pid of pids) expect(() => process.kill(pid, 0), `ffmpeg ${pid} still runs`).toThrow();
});

/** The bytes of a stream as they come, and whether it ended. */
function collect(stream: Duplex) {
  const chunks: Buffer[] = [];
  let ended = false;
  stream.on('data', (d: Buffer) => chunks.push(d));
  stream.on('error', () => undefined);
  stream.on('close', () => {
    ended = true;
  });
  // A detached adb connection comes paused.
  stream.resume();
  return {
    bytes: () => Buffer.concat(chunks),
    get ended() {
      return ended;
    },
  };
}

/** Access units of a raw Annex B stream (the last one ended by flush). */
function units(bytes: Uint8Array) {
  const splitter = new AnnexBSplitter();
  const out = splitter.push(bytes);
  const last = splitter.flush();
  return last === null ? out : [...out, last];
}

const isRed = ([r, g, b]: [number, number, number]) => r > 150 && g < 110 && b < 130;
/** Whether a touch's red mark shows within `radius` pixels of (x, y) in decoded frame `index`. */
function redNear(decoded: DecodedFrames, index: number, x: number, y: number, radius = 4): boolean {
  for (let dy = -radius; dy <= radius; dy++) {
    for (let dx = -radius; dx <= radius; dx++)
      if (isRed(pixelAt(decoded, index, x + dx, y + dy))) return true;
  }
  return false;
}
const isBlack = ([r, g, b]: [number, number, number]) => r < 24 && g < 24 && b < 24;

describe('simulator screenrecord', () => {
  it('sends nothing until the screen changes; then pictures showing the change, letterboxed to --size', async () => {
    const stream = await bed.client.openService(
      serial(),
      'exec:screenrecord --output-format=h264 --size 320x320 --bit-rate 2M -',
    );
    const out = collect(stream);
    await waitFor(
      () =>
        android()
          .device.processes()
          .some((p) => p.cmdline.startsWith('screenrecord ')),
      {
        what: 'screenrecord running',
      },
    );
    expect(out.bytes().length).toBe(0);
    // A tap: the display (1080×2400) fits 144×320 in the middle of 320×320; (540, 1200) is its centre.
    await bed.device().shell('input tap 540 1200');
    await waitFor(() => units(out.bytes()).some((u) => u.key), { what: 'a key frame' });
    stream.destroy();
    const decoded = await decodeH264(out.bytes(), 320, 320);
    expect(decoded.frames.length, decoded.log).toBeGreaterThan(0);
    // The very first picture already shows the tap: nothing was sent before the change.
    expect(redNear(decoded, 0, 160, 160), `centre ${pixelAt(decoded, 0, 160, 160)}`).toBe(true);
    // Black borders left and right (the display is narrower than the picture), content inside.
    expect(isBlack(pixelAt(decoded, 0, 4, 160))).toBe(true);
    expect(isBlack(pixelAt(decoded, 0, 315, 160))).toBe(true);
    expect(isBlack(pixelAt(decoded, 0, 100, 40))).toBe(false);
    await waitFor(
      () =>
        !android()
          .device.processes()
          .some((p) => p.cmdline.startsWith('screenrecord ')),
      {
        what: 'screenrecord gone after the host closed the stream',
      },
    );
  });

  it('stops at its time limit (cut short by the screenrecord-limit-s fault) and exits 0', async () => {
    android().device.faults.screenrecordLimitS = 1;
    const shell = await bed.device().shellStream('screenrecord --output-format=h264 --size 160x320 -');
    expect(await shell.exit).toBe(0);
    const bad = await bed.device().shell('screenrecord --time-limit 181 --output-format=h264 -');
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.toString()).toBe('Time limit 181s outside acceptable range [1,180]\n');
    const size = await bed.device().shell('screenrecord --size 12 --output-format=h264 -');
    expect(size.stderr.toString()).toBe("Invalid size '12', must be width x height\n");
    const rate = await bed.device().shell('screenrecord --bit-rate 5 --output-format=h264 -');
    expect(rate.stderr.toString()).toMatch(/^Bit rate 5bps outside acceptable range \[100000,200000000\]/);
  });
});

describe('simulator glass agent encoder (ScreenMain)', () => {
  const start = (args = '--socket screen-test --max-size 320 --max-fps 10') =>
    bed.device().shellStream(`CLASSPATH=${devicePath} app_process / ${GLASS_SCREEN_MAIN} ${args}`);

  /** Frames of the framing as they come over a connection. */
  function frames(socket: Duplex) {
    const decoder = new ScreenFrameDecoder();
    const got: ScreenFrame[] = [];
    socket.on('data', (d: Buffer) => got.push(...decoder.push(d)));
    socket.on('error', () => undefined);
    socket.resume();
    return got;
  }

  it('serves the framing: session header, config and a key frame at once, then a tap in later frames', async () => {
    const shell = await start();
    const line = await new Promise<string>((resolve) =>
      shell.stdout.once('data', (d: Buffer) => resolve(d.toString())),
    );
    expect(line).toBe('screen listening on localabstract:screen-test\n');
    const socket = await bed.client.openService(serial(), 'localabstract:screen-test');
    const got = frames(socket);
    await waitFor(() => got.some((f) => f.type === 'packet' && f.key), { what: 'a key frame' });
    expect(got[0]).toEqual({
      type: 'session',
      header: { codec: 'h264', videoWidth: 144, videoHeight: 320, displayWidth: 1080, displayHeight: 2400 },
    });
    expect(got[1]).toMatchObject({ type: 'packet', config: true, key: false });
    expect(got[2]).toMatchObject({ type: 'packet', config: false, key: true });
    // A second client is turned away while the first is served.
    const second = await bed.client.openService(serial(), 'localabstract:screen-test');
    await new Promise<void>((resolve) => second.once('close', () => resolve()).resume());

    const before = got.length;
    // (300, 600) on the display is (40, 80) in the 144×320 picture.
    await bed.device().shell('input tap 300 600');
    // Idle frames keep coming; wait for a few after the tap.
    await waitFor(() => got.length > before + 6, { what: 'frames after the tap' });
    socket.destroy();
    expect(await shell.exit).toBe(0);
    const packets = got.filter((f): f is Extract<ScreenFrame, { type: 'packet' }> => f.type === 'packet');
    const pts = packets.map((p) => p.pts);
    expect([...pts].sort((a, b) => a - b)).toEqual(pts);
    const decoded = await decodeH264(Buffer.concat(packets.map((p) => p.data)), 144, 320);
    const pictures = packets.filter((p) => !p.config).length;
    expect(decoded.frames.length, decoded.log).toBe(pictures);
    expect(redNear(decoded, 0, 40, 80)).toBe(false);
    expect(redNear(decoded, decoded.frames.length - 1, 40, 80)).toBe(true);
  });

  it('cannot encode with the screen-encoder-fail fault: exits 1 before listening', async () => {
    android().device.faults.screenEncoderFail = true;
    const result = await bed
      .device()
      .shell(`CLASSPATH=${devicePath} app_process / ${GLASS_SCREEN_MAIN} --socket screen-test`);
    expect(result.exitCode).toBe(1);
    expect(result.stderr.toString()).toMatch(/MediaCodec\$CodecException/);
    expect(android().listening()).not.toContain('localabstract:screen-test');
  });

  it('crashes mid-stream with the screen-encoder-die-after-s fault: frames, then the stream cut and exit 139', async () => {
    android().device.faults.screenEncoderDieAfterS = 1;
    const shell = await start();
    let stderr = '';
    shell.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    await new Promise((resolve) => shell.stdout.once('data', resolve));
    const socket = await bed.client.openService(serial(), 'localabstract:screen-test');
    let closed = false;
    socket.once('close', () => {
      closed = true;
    });
    const got = frames(socket);
    expect(await shell.exit).toBe(139);
    expect(stderr).toMatch(/Fatal signal 11 \(SIGSEGV\)/);
    await waitFor(() => closed, { what: 'the stream cut' });
    expect(got.some((f) => f.type === 'packet' && f.key)).toBe(true);
    expect(android().listening()).not.toContain('localabstract:screen-test');
  });

  it('is killed with its encoder (pkill), and ends on its shell hang-up', async () => {
    const shell = await start();
    await new Promise((resolve) => shell.stdout.once('data', resolve));
    const socket = await bed.client.openService(serial(), 'localabstract:screen-test');
    const got = frames(socket);
    await waitFor(() => got.length > 2 && runningEncoders() === 1, { what: 'streaming' });
    await bed.device().shell(`pkill -f ${GLASS_SCREEN_MAIN.replaceAll('.', '\\\\.')}`);
    expect(await shell.exit).toBe(143);
    const again = await start();
    await new Promise((resolve) => again.stdout.once('data', resolve));
    again.close();
    await waitFor(() => !android().listening().includes('localabstract:screen-test'), { what: 'hung up' });
  });
});
