/**
 * The console's live screen in a real browser: Debian's headless chromium (playwright-core, no
 * browser downloaded) against a real bridge (a simulated device, tokens, the console's sign-in and
 * session cookie), with `GET /v1/leases/{id}/screen` served by test/support/screen-replay.ts: the
 * documented WebSocket messages replaying H.264 made by Debian's ffmpeg (libx264, 720×1280, 30 fps).
 * The stand-in accepts an upgrade only when the app, asked with the upgrade's own cookie, shows the
 * caller the lease. Page screenshots go to .tmp/console/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  OTHER_TENANT_TOKEN,
  testDeviceBridge,
  testTokens,
  timedRequest,
} from '../support/bridge.ts';
import {
  canvasColours,
  canvasFrames,
  launchChromium,
  signIn as signInAs,
} from '../support/console-chromium.ts';
import {
  attachScreenStandIn,
  encodeTestStream,
  type ReplayStream,
  type ReplayViewer,
  type ScreenStandIn,
} from '../support/screen-replay.ts';

const SHOTS = path.resolve(import.meta.dirname, '../../.tmp/console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{
            violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe;
    return (await axe.run()).violations.map(
      (v) =>
        `${v.impact} ${v.id}: ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
  });
}

/** The id of the focused element (the test's tsconfig has no DOM library: evaluated as a string). */
const focused = (page: Page): Promise<string> => page.evaluate('document.activeElement?.id');

/** Decoding in software, on a machine shared with other work: give it time. */
const DECODING = { timeout: 20_000 };

const frames = canvasFrames;

describe('console live screen in chromium (e2e)', () => {
  let bridge: DeviceBridge;
  let served: Awaited<ReturnType<typeof listenApp>>;
  let stream: ReplayStream;
  let standIn: ScreenStandIn;
  let browser: Browser;
  let leaseId: string;
  const contexts: BrowserContext[] = [];

  const signIn = (token = CLIENT_TOKEN, options: { hasTouch?: boolean } = {}): Promise<Page> =>
    signInAs(browser, served.url, token, contexts, options);

  /** The Screen page of the lease, streaming; answers the stand-in's side of its socket. */
  const openScreen = async (page: Page): Promise<ReplayViewer> => {
    const next = standIn.viewers.length + 1;
    await page.goto(`${served.url}/console/screen?lease=${encodeURIComponent(leaseId)}`);
    const viewer = await standIn.viewer(next);
    await expect.poll(() => frames(page), DECODING).toBeGreaterThan(3);
    return viewer;
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    [stream, bridge] = await Promise.all([
      encodeTestStream({ width: 720, height: 1280, fps: 30, frames: 60, gop: 30 }),
      testDeviceBridge({ simulate: 1, auth: testTokens() }),
    ]);
    served = await listenApp(bridge.app);
    standIn = attachScreenStandIn(served.server, stream, async (req, lease) => {
      const res = await bridge.app.request(`/v1/leases/${encodeURIComponent(lease)}`, {
        headers: { cookie: req.headers.cookie ?? '' },
      });
      // As the route will: the caller must see the lease, and it must still be active.
      return res.status === 200 && ((await res.json()) as { state: string }).state === 'active';
    });
    const acquired = await timedRequest(
      bridge.app,
      'POST',
      '/v1/leases',
      { waitSeconds: 30, ttlSeconds: 900 },
      { token: CLIENT_TOKEN },
    );
    expect(acquired.status).toBe(201);
    leaseId = acquired.body['id'] as string;
    browser = await launchChromium();
  });

  // Each test's pages stop streaming with it (every open view decodes 30 fps in software).
  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
  });

  afterAll(async () => {
    await browser?.close();
    standIn?.detach();
    await served?.close();
    await bridge?.cleanup();
  });

  it('headless chromium decodes H.264 with WebCodecs (no flags)', async () => {
    const page = await signIn();
    const supported = await page.evaluate(
      `VideoDecoder.isConfigSupported({ codec: ${JSON.stringify(stream.codec)} }).then((s) => s.supported)`,
    );
    expect(supported).toBe(true);
  });

  it('Screen page from the lease list: frames decode onto the canvas, fps shown, the aspect ratio kept', async () => {
    const page = await signIn();
    await page.getByRole('link', { name: 'Leases', exact: true }).click();
    const link = page.getByRole('link', { name: `Live screen of ${leaseId}` });
    const next = standIn.viewers.length + 1;
    await link.click();
    await page.waitForURL(`${served.url}/console/screen?lease=${leaseId}`);
    const viewer = await standIn.viewer(next);
    expect(viewer.lease).toBe(leaseId);
    await expect.poll(() => frames(page), DECODING).toBeGreaterThan(10);
    await expect.poll(() => page.locator('#live-stats').textContent(), DECODING).toMatch(/^[1-9]\d* fps/);
    expect(await canvasColours(page)).toBeGreaterThan(8);
    const canvas = page.locator('#live-canvas');
    expect(await canvas.getAttribute('width')).toBe('720');
    expect(await canvas.getAttribute('height')).toBe('1280');
    const box = (await canvas.boundingBox())!;
    expect(box.height).toBeLessThanOrEqual(900);
    expect(Math.abs(box.width / box.height - 720 / 1280)).toBeLessThan(0.01);
    expect(await page.locator('#live-status').textContent()).toContain('live: 720×1280 (display 1080×1920)');
    expect(await canvas.getAttribute('data-state')).toBe('streaming');
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'screen-live.png') });
  });

  it('the socket is the session’s: without the cookie, or as another tenant, the upgrade is refused', async () => {
    const refused = standIn.refused;
    const anonymous = new WebSocket(`${served.url.replace('http', 'ws')}/v1/leases/${leaseId}/screen`);
    await new Promise((resolve) => anonymous.addEventListener('close', resolve));
    expect(standIn.refused).toBeGreaterThan(refused);
    const refusedBefore = standIn.refused;
    const other = await signIn(OTHER_TENANT_TOKEN);
    await other.goto(`${served.url}/console/screen?lease=${encodeURIComponent(leaseId)}`);
    // The other tenant does not see the lease: no option to choose, nothing started.
    await expect.poll(() => other.locator('#status').textContent()).toContain('no active lease');
    expect(await other.locator('#lease-select option').count()).toBe(0);
    const status = await other.evaluate(`new Promise((resolve) => {
      const ws = new WebSocket('ws://' + location.host + '/v1/leases/${leaseId}/screen');
      ws.onopen = () => resolve('open');
      ws.onclose = () => resolve('closed');
    })`);
    expect(status).toBe('closed');
    expect(standIn.refused).toBe(refusedBefore + 1);
  });

  it('pointer: a mouse drag and a touch tap send pointer messages in the picture’s pixels', async () => {
    const page = await signIn();
    const viewer = await openScreen(page);
    const box = (await page.locator('#live-canvas').boundingBox())!;
    const at = (fx: number, fy: number) => ({ x: box.x + box.width * fx, y: box.y + box.height * fy });
    await page.mouse.move(at(0.25, 0.5).x, at(0.25, 0.5).y);
    await page.mouse.down();
    await page.mouse.move(at(0.75, 0.5).x, at(0.75, 0.5).y, { steps: 4 });
    await page.mouse.up();
    await expect
      .poll(() => viewer.received.filter((m) => (m as { action?: string }).action === 'up').length)
      .toBe(1);
    const pointer = viewer.received as Array<{ type: string; action: string; x: number; y: number }>;
    expect(pointer.every((m) => m.type === 'pointer')).toBe(true);
    const down = pointer[0]!;
    const up = pointer[pointer.length - 1]!;
    // 25 % across and half-way down a 720×1280 picture: (180, 640); to 75 %: (540, 640) (±1: sub-pixel CSS).
    expect(down.action).toBe('down');
    expect(Math.abs(down.x - 180)).toBeLessThanOrEqual(1);
    expect(Math.abs(down.y - 640)).toBeLessThanOrEqual(1);
    expect(up.action).toBe('up');
    expect(Math.abs(up.x - 540)).toBeLessThanOrEqual(1);
    expect(Math.abs(up.y - 640)).toBeLessThanOrEqual(1);
    const moves = pointer.slice(1, -1);
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.every((m) => m.action === 'move' && m.x > down.x && m.x <= up.x)).toBe(true);
    // The input's effect is timed: input to the next changed picture (testsrc changes every frame).
    await expect.poll(() => page.locator('#live-stats').textContent(), DECODING).toMatch(/\d+ ms last/);

    // The browser takes a pointer over (pointercancel, e.g. for a scroll): a cancel, not an up (a click).
    const before = viewer.received.length;
    await page.mouse.move(at(0.5, 0.25).x, at(0.5, 0.25).y);
    await page.mouse.down();
    await page.locator('#live-canvas').dispatchEvent('pointercancel', { pointerId: 1, isPrimary: true });
    await page.mouse.up();
    await expect.poll(() => viewer.received.length).toBeGreaterThanOrEqual(before + 2);
    const cancelled = viewer.received.slice(before) as Array<{ action: string; x: number; y: number }>;
    expect(cancelled.map((m) => m.action)).toEqual(['down', 'cancel']);
    expect(Math.abs(cancelled[1]!.x - 360)).toBeLessThanOrEqual(1);
    expect(Math.abs(cancelled[1]!.y - 320)).toBeLessThanOrEqual(1);

    const touch = await signIn(CLIENT_TOKEN, { hasTouch: true });
    const touched = await openScreen(touch);
    const tbox = (await touch.locator('#live-canvas').boundingBox())!;
    await touch.touchscreen.tap(tbox.x + tbox.width * 0.5, tbox.y + tbox.height * 0.1);
    await expect.poll(() => touched.received.length).toBeGreaterThanOrEqual(2);
    const [tapDown, tapUp] = touched.received as Array<{ action: string; x: number; y: number }>;
    expect(tapDown).toMatchObject({ type: 'pointer', action: 'down' });
    expect(tapUp).toMatchObject({ type: 'pointer', action: 'up' });
    expect(Math.abs(tapDown!.x - 360)).toBeLessThanOrEqual(1);
    expect(Math.abs(tapDown!.y - 128)).toBeLessThanOrEqual(1);
  });

  it('keyboard on the focused picture: text as text, named keys and chords as key; Ctrl+] leaves it', async () => {
    const page = await signIn();
    const viewer = await openScreen(page);
    await page.locator('#live-canvas').focus();
    await page.keyboard.type('hi');
    // What a French or German layout delivers for é (Playwright types letters off the US layout through
    // insertText, which a canvas never sees).
    await page.locator('#live-canvas').dispatchEvent('keydown', { key: 'é', code: 'Digit2', bubbles: true });
    for (const key of [
      'Enter',
      'Backspace',
      'ArrowLeft',
      'Tab',
      'Shift+Tab',
      'Escape',
      'Control+a',
      'Control+Shift+Z',
    ]) {
      await page.keyboard.press(key);
    }
    const expected = [
      { type: 'text', text: 'h' },
      { type: 'text', text: 'i' },
      { type: 'text', text: 'é' },
      { type: 'key', key: 'enter' },
      { type: 'key', key: 'backspace' },
      { type: 'key', key: 'left' },
      { type: 'key', key: 'tab' },
      { type: 'key', key: 'shift+tab' },
      { type: 'key', key: 'escape' },
      { type: 'key', key: 'ctrl+a' },
      { type: 'key', key: 'ctrl+shift+z' },
    ];
    await expect.poll(() => viewer.received.length).toBe(expected.length);
    expect(viewer.received).toEqual(expected);
    // Tab went to the device: the picture still has focus; Ctrl+] moves it off, sending nothing.
    expect(await focused(page)).toBe('live-canvas');
    await page.keyboard.press('Control+BracketRight');
    expect(await focused(page)).toBe('live-toggle');
    expect(viewer.received.length).toBe(expected.length);
  });

  it('an `end` stops the view and says why; Start opens a new stream', async () => {
    const page = await signIn();
    const viewer = await openScreen(page);
    viewer.end('lease-ended', 'the lease was released');
    await expect.poll(() => page.locator('#live-canvas').getAttribute('data-state'), DECODING).toBe('ended');
    expect(await page.locator('#live-status').textContent()).toBe(
      'stream ended (lease-ended): the lease was released',
    );
    expect(await page.getByRole('button', { name: 'Start live view' }).getAttribute('aria-pressed')).toBe(
      'false',
    );
    const next = standIn.viewers.length + 1;
    await page.getByRole('button', { name: 'Start live view' }).click();
    const again = await standIn.viewer(next);
    expect(again.lease).toBe(leaseId);
    await expect
      .poll(() => page.locator('#live-canvas').getAttribute('data-state'), DECODING)
      .toBe('streaming');
  });

  it('a dropped socket (no `end`) reconnects and frames decode again', async () => {
    const page = await signIn();
    const viewer = await openScreen(page);
    const next = standIn.viewers.length + 1;
    viewer.drop();
    const again = await standIn.viewer(next);
    expect(again.lease).toBe(leaseId);
    expect(await page.locator('#live-canvas').getAttribute('data-connections')).toBe('2');
    const before = await frames(page);
    await expect.poll(() => frames(page), DECODING).toBeGreaterThan(before + 10);
    expect(await page.locator('#live-canvas').getAttribute('data-state')).toBe('streaming');
  });

  it('inspector: the live view starts on demand for the chosen lease', async () => {
    const page = await signIn();
    await page.goto(`${served.url}/console/inspector?lease=${encodeURIComponent(leaseId)}`);
    await expect.poll(() => page.locator('#lease-select').inputValue()).toBe(leaseId);
    expect(await page.locator('#live-canvas').isHidden()).toBe(true);
    const next = standIn.viewers.length + 1;
    await page.getByRole('button', { name: 'Start live view' }).click();
    expect((await standIn.viewer(next)).lease).toBe(leaseId);
    await expect.poll(() => frames(page), DECODING).toBeGreaterThan(5);
    expect(await canvasColours(page)).toBeGreaterThan(8);
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Stop live view' }).click();
    await expect.poll(() => page.locator('#live-status').textContent()).toBe('live view stopped');
  });

  it('last: once the lease is released, a reconnect refused is not retried; the status says why', async () => {
    const page = await signIn();
    const viewer = await openScreen(page);
    const released = await timedRequest(bridge.app, 'DELETE', `/v1/leases/${leaseId}`, undefined, {
      token: CLIENT_TOKEN,
    });
    expect(released.status).toBe(200);
    const refused = standIn.refused;
    viewer.drop();
    await expect.poll(() => page.locator('#live-canvas').getAttribute('data-state'), DECODING).toBe('failed');
    expect(standIn.refused).toBe(refused + 1);
    expect(await page.locator('#live-status').textContent()).toBe(
      `lease ${leaseId} is released: no screen to show`,
    );
    expect(await page.getByRole('button', { name: 'Start live view' }).count()).toBe(1);
  });
});
