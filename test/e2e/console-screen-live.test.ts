/**
 * The console's live view against the real route: Debian's headless chromium on the Screen page of a
 * listening bridge (WebSocket upgrades on, as `devicebridge serve` takes them) whose simulated device
 * streams through the glass agent's encoder (the simulator's libx264) — no stand-in. One bridge, one
 * browser, one lease, in order: frames decode on the canvas; a click on the canvas shows the
 * simulator's touch mark where it landed; a second viewer that stops reading does not stop the page;
 * the lease's release ends the view with `lease-ended` in the status line.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  tempDir,
  testDeviceBridge,
  testTokens,
  timedRequest,
} from '../support/bridge.ts';
import {
  canvasColours,
  canvasFrames,
  canvasPixels,
  launchChromium,
  signIn,
} from '../support/console-chromium.ts';
import { GLASS_SCREEN_MAIN } from '../support/device-bed.ts';
import { publishGlassA11y, publishGlassAgent } from '../support/glass.ts';
import { isRed } from '../support/screen.ts';
import { connectViewer, Viewer } from '../support/screen-viewer.ts';
import { waitFor } from '../support/wait-for.ts';

/** Outer bounds only: software encoding and decoding on a machine shared with a whole suite. */
const SLOW = { timeoutMs: 60_000 };

/** How many pixels of an RGB list are the simulator's touch red. */
const redCount = (rgb: number[]): number => {
  let n = 0;
  for (let i = 0; i + 2 < rgb.length; i += 3) if (isRed([rgb[i]!, rgb[i + 1]!, rgb[i + 2]!])) n++;
  return n;
};

describe('console live screen on the real route in chromium (e2e)', () => {
  let bridge: DeviceBridge;
  let served: Awaited<ReturnType<typeof listenApp>>;
  let glass: { dir: string; cleanup(): Promise<void> };
  let browser: Browser;
  let page: Page;
  let leaseId: string;
  let stalled: Viewer | undefined;
  const contexts: BrowserContext[] = [];

  const frames = () => canvasFrames(page);
  const state = () => page.locator('#live-canvas').getAttribute('data-state');
  const android = () => (bridge.node.simulator!.devices[0]!.android as SimAndroidHandle).device;
  const room = () => bridge.services.deviceSide!.room;

  beforeAll(async () => {
    [bridge, browser, glass] = await Promise.all([
      testDeviceBridge({
        simulate: 1,
        auth: testTokens(),
        // The smallest queue a viewer may have: a viewer that stops reading falls behind soon.
        env: { DEVICEBRIDGE_SCREEN_VIEWER_QUEUE_BYTES: String(64 * 1024) },
      }),
      launchChromium(),
      tempDir('devicebridge-console-live-'),
    ]);
    // The glass agent with its encoder mode (the stream that sends the idle screen at once) and
    // the a11y service, as a bridge in use has them.
    await publishGlassAgent(bridge.services.store, glass.dir, { extra: [GLASS_SCREEN_MAIN] });
    await publishGlassA11y(bridge.services.store);
    served = await listenApp(bridge.app, { websockets: true });
    const acquired = await timedRequest(
      bridge.app,
      'POST',
      '/v1/leases',
      { waitSeconds: 30, ttlSeconds: 900 },
      { token: CLIENT_TOKEN },
    );
    expect(acquired.status, JSON.stringify(acquired.body)).toBe(201);
    leaseId = acquired.body['id'] as string;
    page = await signIn(browser, served.url, CLIENT_TOKEN, contexts);
  }, 120_000);

  afterAll(async () => {
    stalled?.ws.terminate();
    for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
    await browser?.close();
    await served?.close();
    await bridge?.cleanup();
    await glass?.cleanup();
  }, 60_000);

  it('the Screen page: frames from the simulated device decode on the canvas; fps above 0', async () => {
    await page.goto(`${served.url}/console/screen?lease=${encodeURIComponent(leaseId)}`);
    await waitFor(async () => (await frames()) > 5, { what: 'frames decoded on the canvas', ...SLOW });
    await waitFor(async () => Number(await page.locator('#live-canvas').getAttribute('data-fps')) > 0, {
      what: 'the page shows a frame rate above 0',
      ...SLOW,
    });
    expect(await page.locator('#live-stats').textContent()).toMatch(/^[1-9]\d* fps/);
    // The simulator's screen (a UI with boxes and text), not a blank canvas.
    expect(await canvasColours(page)).toBeGreaterThan(2);
    expect(await state()).toBe('streaming');
    // The default picture size: the display's 1080×2400 with its longer side at 1280.
    const canvas = page.locator('#live-canvas');
    expect(await canvas.getAttribute('width')).toBe('576');
    expect(await canvas.getAttribute('height')).toBe('1280');
    expect(await page.locator('#live-status').textContent()).toBe(
      'live: 576×1280 (display 1080×2400), from the glass agent',
    );
  }, 90_000);

  it('a click on the canvas: the device shows the touch mark there, and so does the canvas', async () => {
    const canvas = page.locator('#live-canvas');
    const box = (await canvas.boundingBox())!;
    const width = Number(await canvas.getAttribute('width'));
    const height = Number(await canvas.getAttribute('height'));
    // 30 % across, 60 % down: the picture's point the click maps to.
    const [fx, fy] = [0.3, 0.6];
    const [px, py] = [width * fx, height * fy];
    const before = await canvasPixels(page, px, py, 6);
    expect(redCount(before), 'no touch mark there before the click').toBe(0);
    await page.mouse.click(box.x + box.width * fx, box.y + box.height * fy);
    const touches = () =>
      android()
        .inputEvents()
        .filter((e) => e['type'] === 'glass-touch');
    await waitFor(() => touches().some((e) => e['action'] === 'up'), {
      what: 'the glass agent injected the click',
      ...SLOW,
    });
    let after: number[] = [];
    await waitFor(
      async () => {
        after = await canvasPixels(page, px, py, 6);
        // Most of the mark's filled centre (12×12 on the display: about 6×6 in the picture).
        return redCount(after) >= 16;
      },
      { what: `the touch mark on the canvas near (${Math.round(px)}, ${Math.round(py)})`, ...SLOW },
    );
    expect(after).not.toEqual(before);
    // The device took it at the mapped point (the picture's pixels scaled to the display's).
    const down = touches().find((e) => e['action'] === 'down') as { x: number; y: number } | undefined;
    expect(down).toBeDefined();
    expect(Math.abs(down!.x - 1080 * fx)).toBeLessThanOrEqual(4);
    expect(Math.abs(down!.y - 2400 * fy)).toBeLessThanOrEqual(4);
  }, 90_000);

  it('a second viewer that stops reading does not stop the page: its frames keep coming', async () => {
    const joined = await connectViewer(served, { id: leaseId });
    if (!(joined instanceof Viewer)) throw new Error(`refused: ${JSON.stringify(joined)}`);
    stalled = joined;
    // Never reads (paused as it opens, so its socket's buffers stay small): they fill, then its
    // queue on the bridge, which skips frames. (Loopback's socket buffers take hundreds of kilobytes:
    // tens of seconds of a mostly idle screen's stream.)
    joined.ws.pause();
    await waitFor(
      () => {
        const viewers = room().screen.stats(leaseId);
        return viewers.length === 2 && viewers[1]!.framesSkipped > 0;
      },
      { what: "the stalled viewer's queue skipping frames", timeoutMs: 180_000 },
    );
    const stalledAt = await frames();
    await waitFor(async () => (await frames()) > stalledAt + 30, {
      what: 'the page decoding 30 more frames after the stall',
      ...SLOW,
    });
    expect(await state()).toBe('streaming');
    expect(joined.closed).toBe(false);
  }, 240_000);

  it('the release ends the view: the status line says lease-ended', async () => {
    const released = await timedRequest(bridge.app, 'DELETE', `/v1/leases/${leaseId}`, undefined, {
      token: CLIENT_TOKEN,
    });
    expect(released.status).toBe(200);
    await waitFor(async () => (await state()) === 'ended', { what: 'the view ended', ...SLOW });
    expect(await page.locator('#live-status').textContent()).toMatch(/^stream ended \(lease-ended\)/);
    expect(await page.getByRole('button', { name: 'Start live view' }).getAttribute('aria-pressed')).toBe(
      'false',
    );
  }, 90_000);
});
