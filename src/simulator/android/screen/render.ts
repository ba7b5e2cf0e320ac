/**
 * The simulator's emulated screen as pixels: the window roots of the device's uiautomator XML in
 * document order (later windows cover earlier ones), every node's bounds as a box, its text (or
 * content description) in the 5×7 bitmap font, and the most recent touches as rings (like Android's
 * "show taps"), so a screenshot changes when the UI is tapped.
 */
import type { A11yNode } from '../../glass/a11y.ts';
import { uiWindows } from '../../glass/ui-tree.ts';
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyph } from './bitmap-font.ts';

export type Rgb = readonly [number, number, number];

export interface Point {
  x: number;
  y: number;
}

/** An RGB canvas with clipping. */
export class Canvas {
  readonly width: number;
  readonly height: number;
  readonly pixels: Uint8Array;

  constructor(width: number, height: number, background: Rgb) {
    this.width = width;
    this.height = height;
    this.pixels = new Uint8Array(width * height * 3);
    this.fillRect(0, 0, width, height, background);
  }

  fillRect(x: number, y: number, w: number, h: number, [r, g, b]: Rgb): void {
    const x0 = Math.max(0, Math.floor(x));
    const y0 = Math.max(0, Math.floor(y));
    const x1 = Math.min(this.width, Math.floor(x + w));
    const y1 = Math.min(this.height, Math.floor(y + h));
    for (let yy = y0; yy < y1; yy++) {
      let i = (yy * this.width + x0) * 3;
      for (let xx = x0; xx < x1; xx++) {
        this.pixels[i++] = r;
        this.pixels[i++] = g;
        this.pixels[i++] = b;
      }
    }
  }

  strokeRect(x: number, y: number, w: number, h: number, line: number, color: Rgb): void {
    this.fillRect(x, y, w, line, color);
    this.fillRect(x, y + h - line, w, line, color);
    this.fillRect(x, y, line, h, color);
    this.fillRect(x + w - line, y, line, h, color);
  }

  /** A ring of radius `r` and thickness `line` around `c`. */
  ring(c: Point, r: number, line: number, color: Rgb): void {
    const [cr, cg, cb] = color;
    const outer = r * r;
    const inner = (r - line) * (r - line);
    for (let y = Math.max(0, Math.floor(c.y - r)); y <= Math.min(this.height - 1, c.y + r); y++) {
      for (let x = Math.max(0, Math.floor(c.x - r)); x <= Math.min(this.width - 1, c.x + r); x++) {
        const d = (x - c.x) ** 2 + (y - c.y) ** 2;
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

/** The screen of `xml` at `size` with rings at `touches` (oldest first), as RGB pixels. */
export function renderScreen(
  size: { width: number; height: number },
  xml: string,
  touches: readonly Point[] = [],
): Canvas {
  const canvas = new Canvas(size.width, size.height, [18, 18, 22]);
  uiWindows(xml).forEach(({ root }, i) => {
    const [x, y, w, h] = root.bounds;
    canvas.fillRect(x, y, w, h, WINDOW_BACKGROUNDS[i % WINDOW_BACKGROUNDS.length] as Rgb);
    drawNode(canvas, root, 0);
  });
  for (const t of touches) {
    canvas.ring(t, 48, 8, TOUCH);
    canvas.fillRect(t.x - 6, t.y - 6, 12, 12, TOUCH);
  }
  return canvas;
}

/** Where recorded input events touched the screen (`input tap`, touch plans, glass pointers). */
export function touchPoints(events: ReadonlyArray<Record<string, unknown>>): Point[] {
  const points: Point[] = [];
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  for (const e of events) {
    if (num(e['x']) && num(e['y'])) points.push({ x: e['x'], y: e['y'] });
    else if (num(e['x1']) && num(e['y1'])) points.push({ x: e['x1'], y: e['y1'] });
    else if (Array.isArray(e['gesture'])) {
      // A glass agent pointer gesture (the live screen's and `POST …/pointer`'s input): where it went down.
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
