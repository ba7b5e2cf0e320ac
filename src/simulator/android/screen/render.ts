/**
 * The simulator's emulated screen as pixels: the window roots of the device's uiautomator XML in
 * document order (later windows cover earlier ones), every node's bounds as a box, its text (or
 * content description) in the 5×7 bitmap font, and the most recent touches as rings (like Android's
 * "show taps"), so a screenshot changes when the UI is tapped.
 */
import type { Size } from '../../../protocol/screen/size.ts';
import type { A11yNode } from '../../glass/a11y.ts';
import { uiWindows } from '../../glass/ui-tree.ts';
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyph } from './bitmap-font.ts';

export type Rgb = readonly [number, number, number];

export interface Point {
  x: number;
  y: number;
}

/** Where the display's picture lies on a canvas (the rest stays black: letterbox borders). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * An RGB canvas that draws the display's coordinates: the display (`screen`, default the canvas's
 * own size) scaled into `box` (default the whole canvas), so a picture of another size is drawn at
 * that size rather than drawn full size and scaled. Drawing is clipped to the box.
 */
export class Canvas {
  readonly width: number;
  readonly height: number;
  readonly pixels: Uint8Array;
  readonly #screen: Size;
  readonly #box: Box;
  readonly #sx: number;
  readonly #sy: number;

  constructor(
    width: number,
    height: number,
    background: Rgb | null,
    screen: Size = { width, height },
    box: Box = { x: 0, y: 0, width, height },
  ) {
    this.width = width;
    this.height = height;
    this.pixels = new Uint8Array(width * height * 3);
    this.#screen = screen;
    this.#box = box;
    this.#sx = box.width / screen.width;
    this.#sy = box.height / screen.height;
    if (background !== null) this.fillRect(0, 0, screen.width, screen.height, background);
  }

  /** The same picture in a canvas of its own (drawing on one leaves the other as it was). */
  copy(): Canvas {
    const twin = new Canvas(this.width, this.height, null, this.#screen, this.#box);
    twin.pixels.set(this.pixels);
    return twin;
  }

  // A canvas pixel shows the display pixel under its centre (nearest neighbour): the first canvas
  // column whose centre lies at or right of display pixel column floor(x), clipped to the box. At the
  // display's own size that is floor(x).
  #col(x: number): number {
    const { x: left, width } = this.#box;
    return left + Math.min(width, Math.max(0, Math.ceil(Math.floor(x) * this.#sx - 0.5)));
  }

  #row(y: number): number {
    const { y: top, height } = this.#box;
    return top + Math.min(height, Math.max(0, Math.ceil(Math.floor(y) * this.#sy - 0.5)));
  }

  fillRect(x: number, y: number, w: number, h: number, [r, g, b]: Rgb): void {
    const x0 = this.#col(x);
    const y0 = this.#row(y);
    const x1 = this.#col(x + w);
    const y1 = this.#row(y + h);
    if (x1 <= x0 || y1 <= y0) return;
    const px = this.pixels;
    const stride = this.width * 3;
    const start = (y0 * this.width + x0) * 3;
    const end = start + (x1 - x0) * 3;
    // The first row pixel by pixel, the others copied from it (one memmove a row).
    for (let i = start; i < end; i += 3) {
      px[i] = r;
      px[i + 1] = g;
      px[i + 2] = b;
    }
    for (let row = start + stride; row < y1 * stride; row += stride) px.copyWithin(row, start, end);
  }

  strokeRect(x: number, y: number, w: number, h: number, line: number, color: Rgb): void {
    this.fillRect(x, y, w, line, color);
    this.fillRect(x, y + h - line, w, line, color);
    this.fillRect(x, y, line, h, color);
    this.fillRect(x + w - line, y, line, h, color);
  }

  /** A ring of radius `r` and thickness `line` around `c` (the display pixels whose distance is in it). */
  ring(c: Point, r: number, line: number, color: Rgb): void {
    const [cr, cg, cb] = color;
    const { x: bx, y: by } = this.#box;
    const outer = r * r;
    const inner = (r - line) * (r - line);
    const top = this.#row(c.y - r);
    const bottom = Math.min(this.#row(c.y + r + 1), by + this.#box.height) - 1;
    const left = this.#col(c.x - r);
    const right = Math.min(this.#col(c.x + r + 1), bx + this.#box.width) - 1;
    for (let y = top; y <= bottom; y++) {
      const dy = Math.floor((y - by + 0.5) / this.#sy) - c.y;
      for (let x = left; x <= right; x++) {
        const d = (Math.floor((x - bx + 0.5) / this.#sx) - c.x) ** 2 + dy * dy;
        if (d > outer || d < inner) continue;
        const i = (y * this.width + x) * 3;
        this.pixels[i] = cr;
        this.pixels[i + 1] = cg;
        this.pixels[i + 2] = cb;
      }
    }
  }

  /** Text from (x, y) at `scale` pixels per font pixel, clipped to `maxWidth`; one line. */
  text(value: string, x: number, y: number, scale: number, color: Rgb, maxWidth: number): void {
    const advance = (GLYPH_WIDTH + 1) * scale;
    let cx = x;
    for (const char of value) {
      if (cx + GLYPH_WIDTH * scale > x + maxWidth) break;
      const bits = glyph(char);
      for (let row = 0; row < GLYPH_HEIGHT; row++) {
        for (let col = 0; col < GLYPH_WIDTH; col++) {
          if (bits[row * GLYPH_WIDTH + col])
            this.fillRect(cx + col * scale, y + row * scale, scale, scale, color);
        }
      }
      cx += advance;
    }
  }
}

const WINDOW_BACKGROUNDS: Rgb[] = [
  [250, 250, 252],
  [255, 255, 255],
  [236, 239, 244],
  [226, 230, 236],
];
const BOX: Rgb = [120, 132, 150];
const CLICKABLE_FILL: Rgb = [222, 234, 252];
const CLICKABLE_BOX: Rgb = [40, 98, 200];
const EDIT_FILL: Rgb = [255, 252, 230];
const TEXT: Rgb = [20, 24, 32];
const TOUCH: Rgb = [220, 40, 60];

function drawNode(canvas: Canvas, node: A11yNode, depth: number): void {
  const [x, y, w, h] = node.bounds;
  if (w > 0 && h > 0) {
    if (node.editable) canvas.fillRect(x, y, w, h, EDIT_FILL);
    else if (node.clickable && depth > 0) canvas.fillRect(x, y, w, h, CLICKABLE_FILL);
    canvas.strokeRect(x, y, w, h, 2, node.clickable ? CLICKABLE_BOX : BOX);
    const label = node.text ?? node.desc;
    if (label) {
      const scale = Math.max(2, Math.min(5, Math.floor((h - 8) / GLYPH_HEIGHT)));
      const ty = y + Math.max(4, Math.floor((h - GLYPH_HEIGHT * scale) / 2));
      canvas.text(label, x + 10, ty, scale, TEXT, Math.max(0, w - 20));
    }
  }
  for (const child of node.children) drawNode(canvas, child, depth + 1);
}

/** The box of a `picture` that shows a `display`: all of it (stretched), or its aspect ratio kept, centred. */
export function fitBox(display: Size, picture: Size, fit: 'stretch' | 'letterbox'): Box {
  if (fit === 'stretch') return { x: 0, y: 0, width: picture.width, height: picture.height };
  const scale = Math.min(picture.width / display.width, picture.height / display.height);
  const width = Math.max(1, Math.round(display.width * scale));
  const height = Math.max(1, Math.round(display.height * scale));
  return {
    x: Math.floor((picture.width - width) / 2),
    y: Math.floor((picture.height - height) / 2),
    width,
    height,
  };
}

/**
 * The screen of `xml` on a `display` without the touches, as RGB pixels: at the display's size, or
 * drawn at `picture`'s size into `box` (black around it).
 */
export function renderUi(display: Size, xml: string, picture: Size = display, box?: Box): Canvas {
  const canvas = new Canvas(
    picture.width,
    picture.height,
    [18, 18, 22],
    display,
    box ?? fitBox(display, picture, 'stretch'),
  );
  uiWindows(xml).forEach(({ root }, i) => {
    const [x, y, w, h] = root.bounds;
    canvas.fillRect(x, y, w, h, WINDOW_BACKGROUNDS[i % WINDOW_BACKGROUNDS.length] as Rgb);
    drawNode(canvas, root, 0);
  });
  return canvas;
}

/** Rings at `touches` (oldest first), over what the canvas shows. */
export function drawTouches(canvas: Canvas, touches: readonly Point[]): void {
  for (const t of touches) {
    canvas.ring(t, 48, 8, TOUCH);
    canvas.fillRect(t.x - 6, t.y - 6, 12, 12, TOUCH);
  }
}

/** The screen of `xml` at `size` with rings at `touches` (oldest first), as RGB pixels. */
export function renderScreen(size: Size, xml: string, touches: readonly Point[] = []): Canvas {
  const canvas = renderUi(size, xml);
  drawTouches(canvas, touches);
  return canvas;
}

/**
 * Where recorded input events touched the screen (`input tap`, touch plans, glass pointer gestures,
 * and the glass agent's streamed touches, each recorded with its point).
 */
export function touchPoints(events: ReadonlyArray<Record<string, unknown>>): Point[] {
  const points: Point[] = [];
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  for (const e of events) {
    if (num(e['x']) && num(e['y'])) points.push({ x: e['x'], y: e['y'] });
    else if (num(e['x1']) && num(e['y1'])) points.push({ x: e['x1'], y: e['y1'] });
    else if (Array.isArray(e['gesture'])) {
      // A glass agent pointer gesture (`POST …/pointer`, and the live screen with an agent that has no
      // touch op): where it went down.
      const first = (e['gesture'] as Array<{ x?: unknown; y?: unknown }>)[0];
      if (first && num(first.x) && num(first.y)) points.push({ x: first.x, y: first.y });
    } else if (Array.isArray(e['pointers'])) {
      for (const p of e['pointers'] as Array<{ samples?: Array<{ x?: unknown; y?: unknown }> }>) {
        const s = p.samples?.[0];
        if (s && num(s.x) && num(s.y)) points.push({ x: s.x, y: s.y });
      }
    }
  }
  return points;
}
