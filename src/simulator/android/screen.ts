/**
 * The device's screen as mutable state, one model behind every reader: the uiautomator XML the
 * snapshot helper emulation captures (one-shot and session), the glass a11y service's tree, and
 * the viewport all read `xml()`; the glass agent's `text`/`key` ops and the a11y service's
 * `set_text`/`click` actions edit it. Edits rewrite only the attributes they change (`text`,
 * `focused`) in place, so everything else of a `--ui FILE` screen stays byte for byte; the document
 * is kept as one string and re-made once per edit, never per read (the snapshot path is benchmarked).
 *
 * Text input goes where Android would put it: the focused editable node (an EditText-like class,
 * `isEditableClass`), else the first editable node (document order); with no editable node on the
 * screen it is dropped, as the platform drops key events nothing consumes. The cursor is always at
 * the end of the text: deleting removes the last code point (not grapheme clusters). A tap on an
 * editable node gives it the focus, as a click through the a11y service does.
 */
import { isEditableClass, type NodeTag, nodeTags } from '../glass/ui-tree.ts';
import { escapeAttribute } from '../helper/ui-xml-writer.ts';

/** How far a touch may move and still be a tap (ViewConfiguration's touch slop, 8 dp at 3x). */
export const TOUCH_SLOP_PX = 24;

/** Whether a one-pointer gesture is a tap: every sample within the touch slop of the first. */
export function isTapGesture(points: ReadonlyArray<{ x: number; y: number }>): boolean {
  const [first] = points;
  return (
    first !== undefined && points.every((p) => Math.hypot(p.x - first.x, p.y - first.y) <= TOUCH_SLOP_PX)
  );
}

export class UiScreen {
  readonly #initial: () => string;
  readonly #onChange: () => void;
  #xml: string | undefined;
  /** The current document's `<node>` tags, indexed on first use after each change. */
  #tags: NodeTag[] | undefined;
  #version = 0;

  /**
   * `initial` is called once, on the first read (a generated screen is expensive); `onChange` after
   * every change of the document.
   */
  constructor(initial: () => string, onChange: () => void = () => undefined) {
    this.#initial = initial;
    this.#onChange = onChange;
  }

  /** The current uiautomator XML: the same string on every call until the screen changes. */
  xml(): string {
    this.#xml ??= this.#initial();
    return this.#xml;
  }

  /** Counts changes (0 until the first edit). */
  get version(): number {
    return this.#version;
  }

  #nodes(): NodeTag[] {
    this.#tags ??= [...nodeTags(this.xml())];
    return this.#tags;
  }

  #node(index: number): NodeTag | undefined {
    return this.#nodes()[index];
  }

  /** Whether the node at document index `index` takes text. */
  isEditable(index: number): boolean {
    return isEditableClass(this.#node(index)?.attributes.get('class') ?? '');
  }

  /** The node's current text ("" when it has none); undefined when there is no such node. */
  text(index: number): string | undefined {
    const node = this.#node(index);
    return node === undefined ? undefined : (node.attributes.get('text') ?? '');
  }

  /** Where typed text goes: the focused editable node, else the first one; null when there is none. */
  inputTarget(): number | null {
    const editable = this.#nodes().filter((n) => isEditableClass(n.attributes.get('class') ?? ''));
    return (editable.find((n) => n.attributes.get('focused') === 'true') ?? editable[0])?.index ?? null;
  }

  /** Append `text` to the input target; false when it was dropped (no editable node). */
  type(text: string): boolean {
    const target = this.inputTarget();
    if (target === null) return false;
    if (text !== '') this.#edit([{ index: target, attributes: { text: `${this.text(target)}${text}` } }]);
    return true;
  }

  /** Delete the input target's last code point; false when there is no editable node. */
  deleteBackward(): boolean {
    const target = this.inputTarget();
    if (target === null) return false;
    const chars = Array.from(this.text(target) ?? '');
    if (chars.length > 0) this.#edit([{ index: target, attributes: { text: chars.slice(0, -1).join('') } }]);
    return true;
  }

  /** Replace the text of the node at `index` (ACTION_SET_TEXT); the caller checked it is editable. */
  setText(index: number, text: string): void {
    if (this.#node(index) === undefined) return;
    this.#edit([{ index, attributes: { text } }]);
  }

  /** Another screen comes to the front (another app, another activity): `xml` is its uiautomator dump. */
  show(xml: string): void {
    this.#xml = xml;
    this.#tags = undefined;
    this.#version += 1;
    this.#onChange();
  }

  /** Give the node at `index` the input focus, taking it from whichever node had it. */
  focus(index: number): void {
    if (this.#node(index) === undefined) return;
    const changes = this.#nodes()
      .filter((n) => n.index !== index && n.attributes.get('focused') === 'true')
      .map((n) => ({ index: n.index, attributes: { focused: 'false' } }));
    if (this.#node(index)?.attributes.get('focused') !== 'true') {
      changes.push({ index, attributes: { focused: 'true' } });
    }
    if (changes.length > 0) this.#edit(changes);
  }

  /**
   * The node a touch at (x, y) lands on: in the topmost window containing the point (highest
   * `window-layer`, else the last root), the last node in document order (the deepest, drawn last)
   * whose bounds contain it and that is visible; null when none does.
   */
  nodeAt(x: number, y: number): number | null {
    let best: { layer: number; index: number } | null = null;
    let layer = -1;
    let roots = 0;
    for (const n of this.#nodes()) {
      if (n.depth === 0) {
        const declared = Number(n.attributes.get('window-layer'));
        layer = Number.isFinite(declared) && n.attributes.has('window-layer') ? declared : roots;
        roots += 1;
      }
      if (n.attributes.get('visible-to-user') === 'false') continue;
      const b = BOUNDS.exec(n.attributes.get('bounds') ?? '');
      if (b === null) continue;
      const [left, top, right, bottom] = b.slice(1).map(Number) as [number, number, number, number];
      if (x < left || x >= right || y < top || y >= bottom) continue;
      if (best === null || layer >= best.layer) best = { layer, index: n.index };
    }
    return best?.index ?? null;
  }

  /** A tap at (x, y): an editable node there gets the input focus. Returns the node tapped, or null. */
  tap(x: number, y: number): number | null {
    const hit = this.nodeAt(x, y);
    if (hit !== null && this.isEditable(hit)) this.focus(hit);
    return hit;
  }

  /** Rewrite some attributes of some tags; one new document, one version. */
  #edit(changes: Array<{ index: number; attributes: Record<string, string> }>): void {
    const xml = this.xml();
    const tags = this.#nodes();
    const parts: string[] = [];
    let copied = 0;
    for (const change of [...changes].sort((a, b) => a.index - b.index)) {
      const tag = tags[change.index] as NodeTag;
      let text = xml.slice(tag.start, tag.end);
      for (const [name, value] of Object.entries(change.attributes)) text = setAttribute(text, name, value);
      parts.push(xml.slice(copied, tag.start), text);
      copied = tag.end;
    }
    parts.push(xml.slice(copied));
    this.#xml = parts.join('');
    this.#tags = undefined;
    this.#version += 1;
    this.#onChange();
  }
}

const BOUNDS = /^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$/;
const ATTRIBUTE = /(\s)([A-Za-z_:][-A-Za-z0-9_:.]*)(\s*=\s*)("[^"]*"|'[^']*')/g;

/** `tag` with attribute `name` set to `value` (double-quoted, escaped); added after `<node` when absent. */
function setAttribute(tag: string, name: string, value: string): string {
  const written = `${name}="${escapeAttribute(value)}"`;
  let found = false;
  // One left-to-right pass over name="value" pairs: a name inside another attribute's value never matches.
  const out = tag.replace(ATTRIBUTE, (whole: string, space: string, attr: string) => {
    if (attr !== name || found) return whole;
    found = true;
    return `${space}${written}`;
  });
  return found ? out : tag.replace(/^<node\b/, (open) => `${open} ${written}`);
}
