/**
 * The console in Debian's headless chromium (playwright-core, no browser downloaded): launching it,
 * signing in through the console's sign-in page, and reading the live view's canvas.
 */
import { execFileSync } from 'node:child_process';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export function chromiumPath(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error("Debian's chromium is missing: bash .ci/prereqs installs it (apt-get install chromium)");
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
}

/**
 * A new context signed in to the console at `url` with `token`, on the Devices page; the context is
 * pushed to `contexts` (for the caller to close).
 */
export async function signIn(
  browser: Browser,
  url: string,
  token: string,
  contexts: BrowserContext[],
  options: { hasTouch?: boolean } = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, ...options });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${url}/console/sign-in`);
  await page.getByLabel('Bearer token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${url}/console/devices`);
  return page;
}

/** How many distinct colours the live canvas shows (a blank or never-drawn canvas has one). */
export const canvasColours = (page: Page): Promise<number> =>
  page.evaluate(`(() => {
    const canvas = document.getElementById('live-canvas');
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    const seen = new Set();
    for (let i = 0; i < data.length; i += 4 * 97) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return seen.size;
  })()`);

/** Frames the live view decoded so far (its canvas's `data-frames`). */
export const canvasFrames = async (page: Page): Promise<number> =>
  Number((await page.locator('#live-canvas').getAttribute('data-frames')) ?? 0);

/**
 * The live canvas's RGB pixels in the square of side 2·`radius`+1 around (x, y) of its bitmap (the
 * picture's pixels), clipped to the canvas; row by row, 3 numbers a pixel.
 */
export const canvasPixels = (page: Page, x: number, y: number, radius: number): Promise<number[]> =>
  page.evaluate(`(() => {
    const canvas = document.getElementById('live-canvas');
    const x0 = Math.max(0, ${Math.round(x)} - ${radius});
    const y0 = Math.max(0, ${Math.round(y)} - ${radius});
    const x1 = Math.min(canvas.width, ${Math.round(x)} + ${radius} + 1);
    const y1 = Math.min(canvas.height, ${Math.round(y)} + ${radius} + 1);
    const data = canvas.getContext('2d').getImageData(x0, y0, x1 - x0, y1 - y0).data;
    const out = [];
    for (let i = 0; i < data.length; i += 4) out.push(data[i], data[i + 1], data[i + 2]);
    return out;
  })()`);
