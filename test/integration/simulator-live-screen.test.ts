/**
 * The simulator's live screen (src/simulator/android/screen/live.ts) with its real ffmpeg encoder:
 * a change of the screen is drawn and encoded when it happens, not at the next frame of the rate
 * cap. The rate here is one frame per 100 s, so a change waiting for the next tick would not be
 * encoded within the test's time; the frame rate cap itself is covered by the pacer's unit test.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSimAndroid } from '../../src/simulator/android/index.ts';
import { runningEncoders } from '../../src/simulator/android/screen/encoder.ts';
import { type LiveScreen, startLiveScreen } from '../../src/simulator/android/screen/live.ts';
import { decodeH264, pixelAt } from '../support/screen.ts';
import { waitFor } from '../support/wait-for.ts';

const VIDEO = { width: 720, height: 1600 };
const SLOW_FPS = 0.01;
let live: LiveScreen | undefined;

afterEach(async () => {
  await live?.stop();
  live = undefined;
  expect(runningEncoders()).toBe(0);
});

describe('the simulator live screen', () => {
  it('encodes a change at once, however far the next frame of its rate is', async () => {
    const device = createSimAndroid({ serial: 'live-at-once', seed: 3 }).device;
    const units: Uint8Array[] = [];
    live = startLiveScreen(device, {
      video: VIDEO,
      fit: 'stretch',
      maxFps: SLOW_FPS,
      bitRate: 4_000_000,
      repeat: false, // screenrecord's behaviour: nothing until the screen changes
      onUnit: (unit) => units.push(unit),
    });
    // Past its start (the first look at the screen runs as a microtask): from here only a change
    // or the next frame of the rate can bring a frame.
    await new Promise((resolve) => setImmediate(resolve));
    expect(units).toHaveLength(0);
    // A tap at the display's (540, 1200): the picture's centre shows the touch's red dot.
    device.recordInput({
      type: 'glass-pointer',
      samples: 1,
      button: null,
      gesture: [{ x: 540, y: 1200, t_ms: 0 }],
    });
    await waitFor(() => units.length >= 1, { what: 'the changed screen encoded', timeoutMs: 30_000 });
    const frames = await decodeH264(Buffer.concat(units), VIDEO.width, VIDEO.height);
    expect(frames.frames).toHaveLength(1);
    const [r, g, b] = pixelAt(frames, 0, VIDEO.width / 2, VIDEO.height / 2);
    expect(r).toBeGreaterThan(160);
    expect(g).toBeLessThan(100);
    expect(b).toBeLessThan(110);
  });
});
