/**
 * The live screen end to end on the simulator through a real bridge (`npm run bench screen-live`):
 * a simulated device in its own process (`devicebridge simulate`: the glass agent's encoder mode,
 * the emulated screen rendered and encoded by ffmpeg libx264), a bridge node in its own process
 * (test/bench/support/screen-node.ts: its own adb server, the glass agent released, so the lease's
 * screen is the device's own stream), and this process as the viewers.
 *
 * - screen-fps: frames decoded per second in Debian's headless Chromium on the console's Screen page
 *   (signed in with a token, the page's own client bundle: WebCodecs, every frame drawn on the
 *   canvas; the canvas's `data-frames` counter, as test/bench/screen.bench.ts reads it); baseline:
 *   the frames the bridge relayed to that page in the same window (its viewer's `framesSent`).
 *   The simulated display is 1080×2400, so the picture closest to 720×1280 is 720×1600
 *   (`maxSize=1600`; 1.25× the pixels of 720×1280).
 * - screen-input-to-pixel-ms p50/p95: a click on the canvas (playwright's mouse, so a real
 *   pointerdown/pointerup in the page) → the first frame drawn on the canvas whose pixels around
 *   the click changed (the simulator draws a ring where it was touched); measured in the page, from
 *   the pointerdown to the drawing, over 24 taps at distinct points. Baseline: the same tap through
 *   `POST /v1/leases/{id}/pointer` and then `GET …/screenshot` (what a client without the live
 *   screen does to see a tap's effect: the same glass agent path and the same device render,
 *   without the encode → relay → decode pipeline), interleaved with the live taps.
 * - screen-relay-cpu-ms-per-frame: the bridge process's CPU (process.cpuUsage(), asked of the process
 *   itself) over a window, divided by the frames the device stream delivered in it, with 1 viewer;
 *   baseline the same with 4 viewers (the increment per extra viewer is printed too) and the idle
 *   bridge's CPU (no viewer, no stream) over an equal window, subtracted in `-net`.
 * - screen-rss-mib-per-extra-viewer: the bridge's RSS with 5 viewers minus with 1, over 4 (after a
 *   forced GC each time).
 * Viewers of the CPU and RSS figures are WebSocket clients in this process (no Chromium running).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { chromium, type Page } from 'playwright-core';
import { WebSocket } from 'ws';
import { CLIENT_TOKEN, tempDir } from '../support/bridge.ts';
import { startCli } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';
import { waitFor } from '../support/wait-for.ts';
import { percentile } from './load-stats.ts';
import type { BenchFigure } from './run.ts';

const MAX_SIZE = 1600;
const MAX_FPS = 30;
const TAPS = 24;
const DISPLAY = { width: 1080, height: 2400 };

interface NodeAnswer {
  cpuUs: number;
  rss: number;
  heapUsed: number;
  external: number;
  viewers: Array<{ framesSent: number; framesSkipped: number; queuedBytes: number }>;
}

/** The bridge node process and its stdin/stdout line channel. */
class BridgeProcess {
  readonly url: string;
  readonly pid: number;
  readonly #child: ChildProcess;
  readonly #lines: Interface;
  #waiting: Array<(line: string) => void> = [];

  private constructor(child: ChildProcess, lines: Interface, first: { url: string; pid: number }) {
    this.#child = child;
    this.#lines = lines;
    this.url = first.url;
    this.pid = first.pid;
    lines.on('line', (line) => this.#waiting.shift()?.(line));
  }

  static async start(dataDir: string, address: string): Promise<BridgeProcess> {
    const script = path.join(import.meta.dirname, 'support/screen-node.ts');
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        // e.g. `--cpu-prof --cpu-prof-dir=.tmp/prof` to see where the bridge's time goes
        ...(process.env['BENCH_SCREEN_NODE_ARGS']?.split(' ').filter(Boolean) ?? []),
        '--import',
        'tsx',
        script,
        dataDir,
        address,
      ],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const lines = createInterface({ input: child.stdout! });
    const first = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the bridge node exited (${code}) before starting`)));
    });
    return new BridgeProcess(child, lines, JSON.parse(first) as { url: string; pid: number });
  }

  ask(command: 'stats' | 'gc', lease: string): Promise<NodeAnswer> {
    return new Promise((resolve) => {
      this.#waiting.push((line) => resolve(JSON.parse(line) as NodeAnswer));
      this.#child.stdin!.write(`${command} ${lease}\n`);
    });
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.stdin!.end();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    this.#lines.close();
  }
}

/** A WebSocket viewer of the lease's screen that counts what it gets. */
class CountingViewer {
  readonly ws: WebSocket;
  frames = 0;
  started = false;
  constructor(url: string, lease: string) {
    const ws = `${url.replace(/^http/, 'ws')}/v1/leases/${lease}/screen?maxSize=${MAX_SIZE}&maxFps=${MAX_FPS}`;
    this.ws = new WebSocket(ws, { headers: { Authorization: `Bearer ${CLIENT_TOKEN}` } });
    this.ws.on('message', (_data, isBinary) => {
      if (isBinary) this.frames++;
      else this.started = true;
    });
  }
  async streaming(): Promise<void> {
    await waitFor(() => this.frames > 0, { what: 'a first frame on a viewer socket', timeoutMs: 30_000 });
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ws.readyState === WebSocket.CLOSED) return resolve();
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const MiB = 1024 * 1024;

async function api(url: string, method: string, p: string, body?: unknown): Promise<Response> {
  return fetch(`${url}${p}`, {
    method,
    headers: {
      Authorization: `Bearer ${CLIENT_TOKEN}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
}

/** Where tap `i` lands, as fractions of the picture (a 4 × 6 grid; `shift` offsets the baseline's). */
function tapPoint(i: number, shift: boolean): { fx: number; fy: number } {
  const col = i % 4;
  const row = Math.floor(i / 4) % 6;
  return { fx: (col + (shift ? 1 : 0.5)) / 5, fy: (row + (shift ? 1 : 0.5)) / 7 };
}

/** In the page: time from a pointerdown on the canvas to the first drawn frame whose pixels around it changed. */
const PROBE = `(() => {
  const canvas = document.getElementById('live-canvas');
  const ctx = canvas.getContext('2d');
  const R = 12;
  const around = (x, y) => ctx.getImageData(Math.max(0, x - R), Math.max(0, y - R), 2 * R, 2 * R).data;
  window.__taps = [];
  let pending = null;
  canvas.addEventListener('pointerdown', (e) => {
    const box = canvas.getBoundingClientRect();
    const x = Math.round(((e.clientX - box.left) / box.width) * canvas.width);
    const y = Math.round(((e.clientY - box.top) / box.height) * canvas.height);
    pending = { at: performance.now(), x, y, before: around(x, y) };
  }, { capture: true });
  new MutationObserver(() => {
    if (pending === null) return;
    const now = around(pending.x, pending.y);
    for (let i = 0; i < now.length; i++) {
      if (Math.abs(now[i] - pending.before[i]) > 40) {
        window.__taps.push(performance.now() - pending.at);
        pending = null;
        return;
      }
    }
  }).observe(canvas, { attributes: true, attributeFilter: ['data-frames'] });
})()`;

async function inChromium(bridge: BridgeProcess, lease: string, figures: BenchFigure[]): Promise<void> {
  // The first viewer sets the stream's size: a socket asks for 720×1600, the page joins that stream.
  const starter = new CountingViewer(bridge.url, lease);
  await starter.streaming();
  const chromiumPath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${bridge.url}/console/sign-in`);
    await page.getByLabel('Bearer token').fill(CLIENT_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${bridge.url}/console/devices`);
    await page.goto(`${bridge.url}/console/screen?lease=${encodeURIComponent(lease)}`);
    const decoded = async (p: Page) =>
      Number((await p.locator('#live-canvas').getAttribute('data-frames')) ?? 0);
    await waitFor(async () => (await decoded(page)) > 3, { what: 'frames on the canvas', timeoutMs: 30_000 });
    await starter.close();
    await waitFor(async () => (await bridge.ask('stats', lease)).viewers.length === 1, {
      what: 'the page as the only viewer',
    });
    const canvas = page.locator('#live-canvas');
    const size = `${await canvas.getAttribute('width')}x${await canvas.getAttribute('height')}`;

    await sleep(2000);
    const relayed = async () => (await bridge.ask('stats', lease)).viewers[0]?.framesSent ?? 0;
    const [d0, r0, t0] = [await decoded(page), await relayed(), performance.now()];
    await sleep(10_000);
    const [d1, r1, t1] = [await decoded(page), await relayed(), performance.now()];
    const seconds = (t1 - t0) / 1000;
    const fps = (d1 - d0) / seconds;
    const relayedFps = (r1 - r0) / seconds;
    figures.push(
      {
        bench: `screen-relayed-fps-${size}`,
        value: round(relayedFps),
        unit: 'fps',
        baseline: null,
        ratio: null,
      },
      {
        bench: `screen-fps-${size}`,
        value: round(fps),
        unit: 'fps',
        baseline: `screen-relayed-fps-${size}`,
        ratio: round(fps / relayedFps),
      },
    );

    await page.evaluate(PROBE);
    // Taps land on the part of the picture inside the viewport (the canvas may reach below it).
    const whole = (await canvas.boundingBox())!;
    const box = { ...whole, height: Math.min(whole.height, 900 - whole.y) };
    const live: number[] = [];
    const roundTrip: number[] = [];
    const pointerOnly: number[] = [];
    let missed = 0;
    let unchanged = 0;
    for (let i = 0; i < TAPS; i++) {
      // The previous baseline tap's ring reaches the stream too: let it pass before the next live tap.
      await sleep(250);
      const { fx, fy } = tapPoint(i, false);
      await page.mouse.click(box.x + box.width * fx, box.y + box.height * fy);
      try {
        const ms = await waitFor(
          () => page.evaluate(`window.__taps.length > ${live.length} ? window.__taps[${live.length}] : null`),
          { what: `a changed picture after tap ${i}`, timeoutMs: 5000, intervalMs: 10 },
        );
        live.push(ms as number);
      } catch {
        missed++;
        await page.evaluate(`window.__taps.push(NaN)`);
        live.push(Number.NaN);
      }
      // The same kind of tap without the live screen: the pointer route, then a screenshot.
      const b = tapPoint(i, true);
      const x = Math.round(b.fx * DISPLAY.width);
      const y = Math.round(b.fy * DISPLAY.height);
      const before = Buffer.from(
        await (await api(bridge.url, 'GET', `/v1/leases/${lease}/screenshot`)).arrayBuffer(),
      );
      const started = performance.now();
      const tapped = await api(bridge.url, 'POST', `/v1/leases/${lease}/pointer`, {
        gesture: [
          { x, y, t_ms: 0 },
          { x, y, t_ms: 5 },
        ],
      });
      pointerOnly.push(performance.now() - started);
      if (tapped.status !== 200)
        throw new Error(`POST pointer answered ${tapped.status}: ${await tapped.text()}`);
      const after = Buffer.from(
        await (await api(bridge.url, 'GET', `/v1/leases/${lease}/screenshot`)).arrayBuffer(),
      );
      roundTrip.push(performance.now() - started);
      if (after.equals(before)) unchanged++;
    }
    const ok = live.filter((v) => !Number.isNaN(v));
    const baseP50 = percentile(roundTrip, 50);
    const baseP95 = percentile(roundTrip, 95);
    figures.push(
      {
        bench: 'screen-pointer-screenshot-ms-p50',
        value: round(baseP50),
        unit: 'ms',
        baseline: null,
        ratio: null,
      },
      {
        bench: 'screen-pointer-screenshot-ms-p95',
        value: round(baseP95),
        unit: 'ms',
        baseline: null,
        ratio: null,
      },
      {
        bench: 'screen-input-to-pixel-ms-p50',
        value: round(percentile(ok, 50)),
        unit: 'ms',
        baseline: 'screen-pointer-screenshot-ms-p50',
        ratio: round(percentile(ok, 50) / baseP50),
      },
      {
        bench: 'screen-input-to-pixel-ms-p95',
        value: round(percentile(ok, 95)),
        unit: 'ms',
        baseline: 'screen-pointer-screenshot-ms-p95',
        ratio: round(percentile(ok, 95) / baseP95),
      },
      {
        bench: 'screen-pointer-route-ms-p50',
        value: round(percentile(pointerOnly, 50)),
        unit: 'ms',
        baseline: null,
        ratio: null,
      },
      { bench: 'screen-input-to-pixel-taps', value: ok.length, unit: 'taps', baseline: null, ratio: null },
      { bench: 'screen-input-to-pixel-missed', value: missed, unit: 'taps', baseline: null, ratio: null },
      {
        bench: 'screen-pointer-screenshot-unchanged',
        value: unchanged,
        unit: 'taps',
        baseline: null,
        ratio: null,
      },
    );
    const consoleFigure = await page.locator('#live-stats').textContent();
    process.stderr.write(`screen-live: the console's own stats line: ${consoleFigure}\n`);
    process.stderr.write(`screen-live: live taps ms: ${live.map((v) => round(v, 0)).join(' ')}\n`);
    process.stderr.write(
      `screen-live: pointer+screenshot ms: ${roundTrip.map((v) => round(v, 0)).join(' ')}\n`,
    );
    await context.close();
  } finally {
    await browser.close();
    await starter.close();
  }
}

/** CPU of the bridge over `ms`, and the frames the stream delivered (the first viewer's counter). */
async function cpuWindow(
  bridge: BridgeProcess,
  lease: string,
  ms: number,
): Promise<{ cpuMs: number; frames: number; seconds: number }> {
  const a = await bridge.ask('stats', lease);
  const t0 = performance.now();
  await sleep(ms);
  const b = await bridge.ask('stats', lease);
  const seconds = (performance.now() - t0) / 1000;
  const frames = (b.viewers[0]?.framesSent ?? 0) - (a.viewers[0]?.framesSent ?? 0);
  return { cpuMs: (b.cpuUs - a.cpuUs) / 1000, frames, seconds };
}

async function relay(bridge: BridgeProcess, lease: string, figures: BenchFigure[]): Promise<void> {
  // Idle: no viewer, and the stream stopped (it lingers 2 s after its last viewer).
  await waitFor(async () => (await bridge.ask('stats', lease)).viewers.length === 0, { what: 'no viewers' });
  await sleep(3000);
  const idle = await cpuWindow(bridge, lease, 8000);

  const viewers = [new CountingViewer(bridge.url, lease)];
  await viewers[0]!.streaming();
  await sleep(2000);
  const one = await cpuWindow(bridge, lease, 8000);
  const rss1 = await bridge.ask('gc', lease);

  for (let i = 0; i < 3; i++) viewers.push(new CountingViewer(bridge.url, lease));
  for (const v of viewers) await v.streaming();
  await sleep(1000);
  const four = await cpuWindow(bridge, lease, 8000);
  viewers.push(new CountingViewer(bridge.url, lease));
  await viewers[4]!.streaming();
  await sleep(2000);
  const rss5 = await bridge.ask('gc', lease);
  const skipped = rss5.viewers.reduce((n, v) => n + v.framesSkipped, 0);
  for (const v of viewers.splice(1)) await v.close();
  await sleep(2000);
  const rss1After = await bridge.ask('gc', lease);
  for (const v of viewers.splice(0)) await v.close();

  const idleMsPerS = idle.cpuMs / idle.seconds;
  const perFrame1 = one.cpuMs / one.frames;
  const perFrame4 = four.cpuMs / four.frames;
  const net1 = (one.cpuMs - idleMsPerS * one.seconds) / one.frames;
  const net4 = (four.cpuMs - idleMsPerS * four.seconds) / four.frames;
  process.stderr.write(
    `screen-live: relay windows: idle ${round(idle.cpuMs)} ms CPU in ${round(idle.seconds)} s; ` +
      `1 viewer ${round(one.cpuMs)} ms / ${one.frames} frames in ${round(one.seconds)} s; ` +
      `4 viewers ${round(four.cpuMs)} ms / ${four.frames} frames in ${round(four.seconds)} s; ` +
      `frames skipped by the 5 viewers: ${skipped}; RSS 1 viewer ${round(rss1.rss / MiB)} MiB, ` +
      `5 viewers ${round(rss5.rss / MiB)} MiB, back to 1 ${round(rss1After.rss / MiB)} MiB; ` +
      `heap+external 1 ${round((rss1.heapUsed + rss1.external) / MiB)}, 5 ${round((rss5.heapUsed + rss5.external) / MiB)} MiB\n`,
  );
  figures.push(
    {
      bench: 'screen-relay-idle-cpu-ms-per-s',
      value: round(idleMsPerS, 3),
      unit: 'ms/s',
      baseline: null,
      ratio: null,
    },
    {
      bench: 'screen-relay-cpu-ms-per-frame-4-viewers',
      value: round(perFrame4, 4),
      unit: 'ms/frame',
      baseline: null,
      ratio: null,
    },
    {
      bench: 'screen-relay-cpu-ms-per-frame',
      value: round(perFrame1, 4),
      unit: 'ms/frame',
      baseline: 'screen-relay-cpu-ms-per-frame-4-viewers',
      ratio: round(perFrame1 / perFrame4, 3),
    },
    {
      bench: 'screen-relay-cpu-ms-per-frame-net',
      value: round(net1, 4),
      unit: 'ms/frame',
      baseline: 'screen-relay-idle-cpu-ms-per-s',
      ratio: null,
    },
    {
      bench: 'screen-relay-cpu-ms-per-frame-per-extra-viewer',
      value: round((net4 - net1) / 3, 4),
      unit: 'ms/frame',
      baseline: 'screen-relay-cpu-ms-per-frame-net',
      ratio: round((net4 - net1) / 3 / net1, 3),
    },
    {
      bench: 'screen-relay-fps',
      value: round(one.frames / one.seconds),
      unit: 'fps',
      baseline: null,
      ratio: null,
    },
    {
      bench: 'screen-rss-mib-1-viewer',
      value: round(rss1.rss / MiB),
      unit: 'MiB',
      baseline: null,
      ratio: null,
    },
    {
      bench: 'screen-rss-mib-per-extra-viewer',
      value: round((rss5.rss - rss1.rss) / 4 / MiB, 3),
      unit: 'MiB',
      baseline: 'screen-rss-mib-1-viewer',
      ratio: round(rss5.rss / rss1.rss, 3),
    },
  );
}

export async function bench(): Promise<BenchFigure[]> {
  const figures: BenchFigure[] = [];
  const tmp = await tempDir('devicebridge-screen-bench-');
  const sim = await startCli(['simulate', '--port', String(await freePort()), '--json']);
  let bridge: BridgeProcess | undefined;
  try {
    const { address } = JSON.parse(sim.firstLine) as { address: string };
    bridge = await BridgeProcess.start(tmp.dir, address);
    const acquired = await api(bridge.url, 'POST', '/v1/leases', { waitSeconds: 30, ttlSeconds: 900 });
    if (acquired.status !== 201)
      throw new Error(`acquire answered ${acquired.status}: ${await acquired.text()}`);
    const lease = ((await acquired.json()) as { id: string }).id;
    const only = process.env['BENCH_SCREEN_LIVE'];
    if (only !== 'relay') await inChromium(bridge, lease, figures);
    if (only !== 'chromium') await relay(bridge, lease, figures);
    await api(bridge.url, 'DELETE', `/v1/leases/${lease}`);
  } finally {
    await bridge?.stop();
    sim.child.kill('SIGTERM');
    await tmp.cleanup();
  }
  return figures;
}
