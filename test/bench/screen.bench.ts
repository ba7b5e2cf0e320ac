/**
 * The console's live view decoding in Chromium (Debian's headless chromium, software H.264 through
 * WebCodecs): frames decoded per second at 720×1280, against the rate the replay sent them in the
 * same window (test/support/screen-replay.ts replaying ffmpeg's libx264 testsrc). The page is the
 * console's own client bundle (the Screen page's markup, /v1/leases answered with one lease), so the
 * figure includes drawing every frame on the canvas. Replayed at 30 fps (the goal: ≥ 30 decoded) and
 * at 60 fps (headroom). `npm run bench screen`.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { consoleAssets } from '../../src/console/assets.ts';
import { attachScreenStandIn, encodeTestStream, type ReplayStream } from '../support/screen-replay.ts';
import type { BenchFigure } from './run.ts';

const WARM_UP_MS = 2000;
const WINDOW_MS = 6000;

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>screen bench</title></head>
<body data-page="screen"><div id="status"></div>
<select id="lease-select"></select>
<button id="live-toggle" type="button">Start live view</button>
<span id="live-status"></span><p id="live-stats"></p>
<canvas id="live-canvas" hidden tabindex="0"></canvas>
<script src="/console.js"></script></body></html>`;

async function measure(stream: ReplayStream): Promise<{ decoded: number; sent: number }> {
  const { script } = await consoleAssets();
  const server = createServer((req, res) => {
    if (req.url === '/console.js') {
      res.setHeader('Content-Type', script.type);
      res.end(script.body);
    } else if (req.url === '/v1/leases') {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ leases: [{ id: 'bench', deviceId: 'replay', state: 'active' }] }));
    } else {
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(PAGE);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const standIn = attachScreenStandIn(server, stream, async () => true);
  const chromiumPath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 800, height: 1400 } });
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const viewer = await standIn.viewer(1);
    const decoded = async () => Number((await page.locator('#live-canvas').getAttribute('data-frames')) ?? 0);
    await page.waitForTimeout(WARM_UP_MS);
    const [d0, s0, t0] = [await decoded(), viewer.sentFrames, performance.now()];
    await page.waitForTimeout(WINDOW_MS);
    const [d1, s1, t1] = [await decoded(), viewer.sentFrames, performance.now()];
    const seconds = (t1 - t0) / 1000;
    return { decoded: (d1 - d0) / seconds, sent: (s1 - s0) / seconds };
  } finally {
    await browser.close();
    standIn.detach();
    server.close();
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

export async function bench(): Promise<BenchFigure[]> {
  const figures: BenchFigure[] = [];
  for (const fps of [30, 60]) {
    const stream = await encodeTestStream({ width: 720, height: 1280, fps, frames: fps * 4, gop: fps });
    const { decoded, sent } = await measure(stream);
    figures.push(
      {
        bench: `screen-replay-sent-720x1280@${fps}`,
        value: round(sent),
        unit: 'fps',
        baseline: null,
        ratio: null,
      },
      {
        bench: `screen-decoded-720x1280@${fps}`,
        value: round(decoded),
        unit: 'fps',
        baseline: `screen-replay-sent-720x1280@${fps}`,
        ratio: round(decoded / sent),
      },
    );
  }
  return figures;
}
