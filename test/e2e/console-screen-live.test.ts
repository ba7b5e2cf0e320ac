/**
 * The console's live view against the real route: Debian's headless chromium on the Screen page of a
 * listening bridge (WebSocket upgrades on, as `devicebridge serve` takes them) whose simulated device
 * streams through the glass agent's encoder (the simulator's libx264) — no stand-in. The page reaches
 * the bridge through a TCP relay the test owns, so the network between them can fail.
 *
 * One bridge, one lease, in order: frames decode on the canvas; a click on the canvas shows the
 * simulator's touch mark where it landed; keys typed on the focused picture (non-ASCII too) reach the
 * app's focused field and show on the canvas; the relay's connections cut, the page reconnects by
 * itself and decodes again; a second viewer that stops reading does not stop the page; the lease's
 * release ends the view with `lease-ended` in the status line.
 *
 * A second bridge whose device cannot encode (the bridge falls back to `screenrecord`) and stops
 * every recording after 2 s: the page decodes across the restarts with no reconnect, no decoder
 * error and no change of its status line.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimAndroidHandle } from '../../src/simulator/android/index.ts';
import {
  CLIENT_TOKEN,
  type DeviceBridge,
  listenApp,
  SHELL_TOKEN,
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
import { type A11yTreeNode, flattenA11yTree, GLASS_SCREEN_MAIN } from '../support/device-bed.ts';
import { publishGlassA11y, publishGlassAgent } from '../support/glass.ts';
import { isRed } from '../support/screen.ts';
import { connectViewer, Viewer } from '../support/screen-viewer.ts';
import { type TcpRelay, tcpRelay } from '../support/tcp-relay.ts';
import { waitFor } from '../support/wait-for.ts';

/** Outer bounds only: software encoding and decoding on a machine shared with a whole suite. */
const SLOW = { timeoutMs: 60_000 };

/** How many pixels of an RGB list are the simulator's touch red. */
const redCount = (rgb: number[]): number => {
  let n = 0;
  for (let i = 0; i + 2 < rgb.length; i += 3) if (isRed([rgb[i]!, rgb[i + 1]!, rgb[i + 2]!])) n++;
  return n;
};

/** How many pixels of an RGB list are dark: the simulator's text (its boxes and fills are light). */
const darkCount = (rgb: number[]): number => {
  let n = 0;
  for (let i = 0; i + 2 < rgb.length; i += 3) if (rgb[i]! + rgb[i + 1]! + rgb[i + 2]! < 240) n++;
  return n;
};

/**
 * From now on, every change the page makes to the live view's status line and to the canvas's
 * `data-state` / `data-connections` / size attributes, as `state | connections | status` lines (read
 * with `viewChanges`). The page's uncaught errors too.
 */
async function watchView(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    const canvas = document.getElementById('live-canvas');
    const status = document.getElementById('live-status');
    const log = (globalThis.__viewChanges = []);
    const note = () =>
      log.push(canvas.dataset.state + ' | ' + canvas.dataset.connections + ' | ' + status.textContent);
    new MutationObserver(note).observe(status, { childList: true, characterData: true, subtree: true });
    new MutationObserver(note).observe(canvas, {
      attributes: true,
      attributeFilter: ['data-state', 'data-connections', 'width', 'height'],
    });
    globalThis.__pageErrors = [];
    globalThis.addEventListener('error', (e) => globalThis.__pageErrors.push(String(e.message)));
  })()`);
}

const viewChanges = (page: Page): Promise<{ changes: string[]; errors: string[] }> =>
  page.evaluate('({ changes: globalThis.__viewChanges, errors: globalThis.__pageErrors })');

/** A lease of the bridge's simulated device for the client token; its id. */
async function acquireLease(bridge: DeviceBridge): Promise<string> {
  const acquired = await timedRequest(
    bridge.app,
    'POST',
    '/v1/leases',
    { waitSeconds: 30, ttlSeconds: 900 },
    { token: CLIENT_TOKEN },
  );
  expect(acquired.status, JSON.stringify(acquired.body)).toBe(201);
  return acquired.body['id'] as string;
}

/**
 * A key as a German keyboard delivers it (`ü` on the key US layouts call `[`): a trusted keydown
 * through the browser's input pipeline, as a keyboard's is. (Playwright types characters off the
 * US layout as composed text, which a canvas never sees as keys.)
 */
async function pressLayoutKey(page: Page, key: string, code: string): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('Input.dispatchKeyEvent', { type: 'keyDown', key, code, text: key, unmodifiedText: key });
    await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key, code });
  } finally {
    await cdp.detach();
  }
}

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
}, 30_000);

describe('console live screen on the real route in chromium (e2e)', () => {
  let bridge: DeviceBridge;
  let served: Awaited<ReturnType<typeof listenApp>>;
  let relay: TcpRelay;
  let glass: { dir: string; cleanup(): Promise<void> };
  let page: Page;
  let leaseId: string;
  let stalled: Viewer | undefined;
  const contexts: BrowserContext[] = [];

  const frames = () => canvasFrames(page);
  const canvas = () => page.locator('#live-canvas');
  const state = () => canvas().getAttribute('data-state');
  const connections = async () => Number(await canvas().getAttribute('data-connections'));
  const android = () => (bridge.node.simulator!.devices[0]!.android as SimAndroidHandle).device;
  const room = () => bridge.services.deviceSide!.room;

  beforeAll(async () => {
    [bridge, glass] = await Promise.all([
      testDeviceBridge({
        simulate: 1,
        auth: testTokens(),
        // The smallest queue a viewer may have: a viewer that stops reading falls behind soon.
        env: { DEVICEBRIDGE_SCREEN_VIEWER_QUEUE_BYTES: String(64 * 1024) },
      }),
      tempDir('devicebridge-console-live-'),
    ]);
    // The glass agent with its encoder mode (the stream that sends the idle screen at once) and
    // the a11y service, as a bridge in use has them.
    await publishGlassAgent(bridge.services.store, glass.dir, { extra: [GLASS_SCREEN_MAIN] });
    await publishGlassA11y(bridge.services.store);
    served = await listenApp(bridge.app, { websockets: true });
    relay = await tcpRelay(served.url);
    leaseId = await acquireLease(bridge);
    // Signed in, and every page load and socket from here on, through the relay.
    page = await signIn(browser, relay.url, CLIENT_TOKEN, contexts);
  }, 120_000);

  afterAll(async () => {
    stalled?.ws.terminate();
    for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
    await relay?.close();
    await served?.close();
    await bridge?.cleanup();
    await glass?.cleanup();
  }, 60_000);

  it('the Screen page: frames from the simulated device decode on the canvas; fps above 0', async () => {
    await page.goto(`${relay.url}/console/screen?lease=${encodeURIComponent(leaseId)}`);
    await waitFor(async () => (await frames()) > 5, { what: 'frames decoded on the canvas', ...SLOW });
    await waitFor(async () => Number(await canvas().getAttribute('data-fps')) > 0, {
      what: 'the page shows a frame rate above 0',
      ...SLOW,
    });
    expect(await page.locator('#live-stats').textContent()).toMatch(/^[1-9]\d* fps/);
    // The simulator's screen (a UI with boxes and text), not a blank canvas.
    expect(await canvasColours(page)).toBeGreaterThan(2);
    expect(await state()).toBe('streaming');
    // The default picture size: the display's 1080×2400 with its longer side at 1280.
    expect(await canvas().getAttribute('width')).toBe('576');
    expect(await canvas().getAttribute('height')).toBe('1280');
    expect(await page.locator('#live-status').textContent()).toBe(
      'live: 576×1280 (display 1080×2400), from the glass agent',
    );
  }, 90_000);

  it('a click on the canvas: the device shows the touch mark there, and so does the canvas', async () => {
    const box = (await canvas().boundingBox())!;
    const width = Number(await canvas().getAttribute('width'));
    const height = Number(await canvas().getAttribute('height'));
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

  it('keys on the focused picture: `Grüße` typed reaches the focused field (a11y tree) and shows on the canvas', async () => {
    const box = (await canvas().boundingBox())!;
    // The built-in screen's dialog: its "Folder name" EditText is [131,940][949,1066] on the
    // 1080×2400 display, showing `Trips & "ideas"` in a 5× font (30 display pixels a character)
    // from x = 141. A click near its left end focuses it (and the picture).
    // A click is a streamed touch: its up is the agent's last event of it.
    const ups = () =>
      android()
        .inputEvents()
        .filter((e) => e['type'] === 'glass-touch' && e['action'] === 'up').length;
    const clicked = ups();
    await page.mouse.click(box.x + (box.width * 200) / 1080, box.y + (box.height * 1003) / 2400);
    await waitFor(() => ups() > clicked, { what: 'the glass agent injected the click', ...SLOW });
    expect(await page.evaluate('document.activeElement?.id')).toBe('live-canvas');
    // Where characters 16 to 20 of the field's text go, in the picture's pixels (576/1080 of the display).
    const scale = Number(await canvas().getAttribute('width')) / 1080;
    const [tx, ty] = [((591 + 736) / 2) * scale, ((985 + 1020) / 2) * scale];
    const before = darkCount(await canvasPixels(page, tx, ty, 10));

    await page.keyboard.type('Gr');
    await pressLayoutKey(page, 'ü', 'BracketLeft');
    await pressLayoutKey(page, 'ß', 'Minus');
    await page.keyboard.type('e');

    const typed = () =>
      android()
        .inputEvents()
        .filter((e) => e['type'] === 'glass-text').length;
    await waitFor(() => typed() >= 5, { what: 'the glass agent typed five characters', ...SLOW });
    const tree = await timedRequest(bridge.app, 'GET', `/v1/leases/${leaseId}/a11y/tree`, undefined, {
      token: CLIENT_TOKEN,
    });
    expect(tree.status, JSON.stringify(tree.body)).toBe(200);
    const fields = flattenA11yTree(tree.body['root'] as A11yTreeNode).filter((n) => n.editable);
    expect(fields.map((n) => n.text)).toContain('Trips & "ideas"Grüße');
    await waitFor(async () => darkCount(await canvasPixels(page, tx, ty, 10)) > before + 20, {
      what: `the typed text on the canvas near (${Math.round(tx)}, ${Math.round(ty)})`,
      ...SLOW,
    });
    expect(await state()).toBe('streaming');
  }, 90_000);

  it('a network blip: the relay cuts the socket, the page reconnects by itself and decodes again', async () => {
    await watchView(page);
    const opened = await connections();
    expect(room().screen.stats(leaseId)).toHaveLength(1);
    expect(relay.cut(), 'connections through the relay').toBeGreaterThan(0);
    await waitFor(async () => (await connections()) === opened + 1, {
      what: 'the page opened a new socket',
      ...SLOW,
    });
    const reconnected = await frames();
    await waitFor(async () => (await frames()) > reconnected + 10, {
      what: 'frames decoding after the reconnect',
      ...SLOW,
    });
    await waitFor(async () => (await state()) === 'streaming', { what: 'streaming again', ...SLOW });
    const { changes, errors } = await viewChanges(page);
    // Lost, then told to wait, then live again: nothing stopped it for good.
    expect(
      changes.some((c) => c.startsWith('reconnecting |')),
      changes.join('\n'),
    ).toBe(true);
    expect(changes.at(-1)).toBe(
      `streaming | ${opened + 1} | live: 576×1280 (display 1080×2400), from the glass agent`,
    );
    expect(changes.filter((c) => /^(failed|ended|stopped) /.test(c))).toEqual([]);
    expect(errors).toEqual([]);
    // The bridge let the cut viewer go: one viewer, the page's new socket.
    await waitFor(() => room().screen.stats(leaseId).length === 1, { what: 'one viewer on the bridge' });
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

  it('the release ends the view: the status line says lease-ended; the page does not reconnect', async () => {
    const opened = await connections();
    const released = await timedRequest(bridge.app, 'DELETE', `/v1/leases/${leaseId}`, undefined, {
      token: CLIENT_TOKEN,
    });
    expect(released.status).toBe(200);
    await waitFor(async () => (await state()) === 'ended', { what: 'the view ended', ...SLOW });
    expect(await page.locator('#live-status').textContent()).toMatch(/^stream ended \(lease-ended\)/);
    expect(await page.getByRole('button', { name: 'Start live view' }).getAttribute('aria-pressed')).toBe(
      'false',
    );
    expect(await connections()).toBe(opened);
  }, 90_000);
});

describe('console live screen from screenrecord, recordings cut short, in chromium (e2e)', () => {
  let bridge: DeviceBridge;
  let served: Awaited<ReturnType<typeof listenApp>>;
  let glass: { dir: string; cleanup(): Promise<void> };
  let page: Page;
  let leaseId: string;
  const contexts: BrowserContext[] = [];

  const frames = () => canvasFrames(page);
  const device = () => bridge.node.simulator!.devices[0]!;
  const screenrecords = () =>
    (device().android as SimAndroidHandle).device
      .processes()
      .filter((p) => p.cmdline.startsWith('screenrecord'));

  /** A tap on the display through the lease's shell: screenrecord sends a picture only when it changes. */
  const tap = async (x: number, y: number) => {
    const res = await timedRequest(
      bridge.app,
      'POST',
      `/v1/leases/${leaseId}/shell`,
      { argv: ['input', 'tap', String(x), String(y)] },
      { token: SHELL_TOKEN },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };

  beforeAll(async () => {
    [bridge, glass] = await Promise.all([
      testDeviceBridge({ simulate: 1, auth: testTokens({ withShell: true }) }),
      tempDir('devicebridge-console-screenrecord-'),
    ]);
    await publishGlassAgent(bridge.services.store, glass.dir, { extra: [GLASS_SCREEN_MAIN] });
    await publishGlassA11y(bridge.services.store);
    // The agent cannot encode (the bridge falls back to screenrecord), and every recording stops
    // after 2 s, as some devices stop screenrecord well before its limit.
    device().setFault({ screenEncoderFail: true, screenrecordLimitS: 2 });
    served = await listenApp(bridge.app, { websockets: true });
    leaseId = await acquireLease(bridge);
    page = await signIn(browser, served.url, CLIENT_TOKEN, contexts);
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
    await served?.close();
    await bridge?.cleanup();
    await glass?.cleanup();
  }, 60_000);

  it('frames keep decoding across two restarts of screenrecord: no reconnect, no decoder error, no status change', async () => {
    await page.goto(`${served.url}/console/screen?lease=${encodeURIComponent(leaseId)}`);
    // Nothing comes until the screen changes: change it until a picture decodes.
    await waitFor(
      async () => {
        if ((await frames()) > 0) return true;
        await tap(800, 600);
        return false;
      },
      { what: 'a first picture on the canvas', ...SLOW, intervalMs: 200 },
    );
    const live = 'live: 576×1280 (display 1080×2400), from the screenrecord';
    expect(await page.locator('#live-status').textContent()).toBe(live);
    await watchView(page);

    const pids = new Set<number>();
    const seePids = () => {
      for (const p of screenrecords()) pids.add(p.pid);
    };
    // Taps whose picture decoded while the third recording (or a later one) was known.
    let shownAfterTwoRestarts = 0;
    for (let i = 0; pids.size < 3 || shownAfterTwoRestarts < 3; i++) {
      if (i > 300) throw new Error(`${pids.size} recordings after 300 taps`);
      seePids();
      const recordings = pids.size;
      const seen = await frames();
      await tap(100 + ((i * 97) % 880), 300 + ((i * 211) % 1800));
      try {
        await waitFor(async () => (await frames()) > seen, {
          what: `the picture of tap ${i}`,
          timeoutMs: 5000,
        });
        if (recordings >= 3) shownAfterTwoRestarts++;
      } catch (err) {
        // A change made between one recording's end and the next one's start shows with the next
        // change (screenrecord sends nothing for an unchanged screen).
        seePids();
        if (pids.size === recordings) throw err;
      }
    }
    expect(pids.size).toBeGreaterThanOrEqual(3);
    const { changes, errors } = await viewChanges(page);
    expect(changes, 'the status line and the view attributes did not change').toEqual([]);
    expect(errors).toEqual([]);
    expect(await page.locator('#live-status').textContent()).toBe(live);
    expect(await page.locator('#live-canvas').getAttribute('data-state')).toBe('streaming');
    expect(await page.locator('#live-canvas').getAttribute('data-connections')).toBe('1');
    // Still the one viewer the page opened.
    expect(bridge.services.deviceSide!.room.screen.stats(leaseId)).toHaveLength(1);
  }, 240_000);

  it('the release ends the view with lease-ended', async () => {
    const released = await timedRequest(bridge.app, 'DELETE', `/v1/leases/${leaseId}`, undefined, {
      token: CLIENT_TOKEN,
    });
    expect(released.status).toBe(200);
    await waitFor(async () => (await page.locator('#live-canvas').getAttribute('data-state')) === 'ended', {
      what: 'the view ended',
      ...SLOW,
    });
    expect(await page.locator('#live-status').textContent()).toMatch(/^stream ended \(lease-ended\)/);
  }, 90_000);
});
