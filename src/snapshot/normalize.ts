/**
 * uiautomator XML → normalized snapshot tree. Pure, no I/O.
 *
 * A single-pass scanner over the uiautomator subset of XML (prolog, comments, processing
 * instructions, `<hierarchy>`, nested and self-closing `<node>` elements, attributes in single or
 * double quotes, predefined and numeric character references, any whitespace incl. CRLF), which
 * builds the normalized nodes directly instead of a generic DOM. Unknown elements are tolerated
 * (their `<node>` descendants attach to the nearest enclosing node), unknown (vendor) attributes
 * are skipped. Malformed XML throws `BridgeError('HELPER_PROTOCOL_ERROR')` whose message and
 * `details` name the offset, line and column; nothing else is ever thrown.
 *
 * Semantics:
 * - refs `e1`, `e2`, … in document order; `type` is the short class name.
 * - `visible` from `visible-to-user` when present, else true.
 * - window roots (direct children of `<hierarchy>`) carry `window`: index (`window-index`, else
 *   position), rotation (from `<hierarchy rotation>`), package, and display-id / window-type /
 *   window-layer / active / focused / bounds when present.
 * - scroll hints on scrollable nodes: `can-scroll-forward/backward` attributes when present, else
 *   derived from children whose bounds extend past the container (below/right → forward,
 *   above/left → backward).
 * - occlusion: a node ≥ 90 % of whose area is covered by the visible content of a later sibling
 *   with a higher `drawing-order` gets `covered: true`, `hittable: false`; so do its descendants
 *   that are ≥ 90 % inside that content. A sibling's visible content is its own bounds when it is
 *   visible, non-empty and shows or does something (text, content-desc, clickable, long-clickable,
 *   scrollable, checkable), else the bounding box of its children's visible content (clipped to
 *   it): a transparent full-screen container holding one small search bar covers only the bar. `drawing-order` itself stays out of the nodes (private
 *   capture evidence, seed 000).
 * - `hittable` = visible && non-empty bounds && !covered.
 */
import { BridgeError } from '../errors.ts';

export interface Bounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowInfo {
  /** `window-index` when the helper wrote it, else the root's position among the roots. */
  index: number;
  rotation: number | null;
  package: string;
  displayId?: number;
  type?: number;
  layer?: number;
  active?: boolean;
  focused?: boolean;
  bounds?: Bounds;
}

export interface SnapshotNode {
  ref: string;
  /** Short class name (`TextView` for `android.widget.TextView`). */
  type: string;
  className: string;
  text: string;
  contentDesc: string;
  resourceId: string;
  package: string;
  hint: string;
  /** The `index` attribute (position among the parent's children on the device), or -1. */
  index: number;
  /** From `[l,t][r,b]`; null when absent or malformed. Width/height never negative. */
  bounds: Bounds | null;
  visible: boolean;
  enabled: boolean;
  clickable: boolean;
  longClickable: boolean;
  focusable: boolean;
  focused: boolean;
  scrollable: boolean;
  checkable: boolean;
  checked: boolean;
  selected: boolean;
  password: boolean;
  /** Scroll hints; null on non-scrollable nodes. */
  canScrollForward: boolean | null;
  canScrollBackward: boolean | null;
  covered: boolean;
  hittable: boolean;
  /** Window metadata, on window roots only (else null). */
  window: WindowInfo | null;
  children: SnapshotNode[];
}

export interface NormalizedSnapshot {
  rotation: number | null;
  windowCount: number;
  nodeCount: number;
  /** Window roots (the direct `<node>` children of `<hierarchy>`). */
  windows: SnapshotNode[];
  /** Every node in document order (`nodes[i].ref === 'e' + (i + 1)`). Not enumerable: not in JSON. */
  readonly nodes: SnapshotNode[];
  /** The XML this was normalized from. Not enumerable: not in JSON. */
  readonly raw: string;
}

export interface NormalizeOptions {
  /** Share of a node's area a covering sibling must hide (default 0.9). */
  coverageThreshold?: number;
}

const NO_ORDER = -2147483648;

class XmlError extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function isNameEnd(c: number): boolean {
  // whitespace, '/', '>', '=' or end of input (NaN)
  return c === 32 || c === 10 || c === 13 || c === 9 || c === 47 || c === 62 || c === 61 || Number.isNaN(c);
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Decode character references in `xml[start, end)` (known to contain '&'). */
function decodeEntities(xml: string, start: number, end: number): string {
  const parts: string[] = [];
  let last = start;
  let amp = xml.indexOf('&', start);
  while (amp !== -1 && amp < end) {
    const semi = xml.indexOf(';', amp + 1);
    if (semi === -1 || semi >= end || semi - amp > 12) throw new XmlError(amp, "unterminated '&' reference");
    let decoded: string | undefined;
    if (xml.charCodeAt(amp + 1) === 35 /* # */) {
      const hex = xml.charCodeAt(amp + 2) === 120; /* x */
      const digits = xml.slice(amp + (hex ? 3 : 2), semi);
      const valid = hex ? /^[0-9a-fA-F]{1,6}$/.test(digits) : /^[0-9]{1,7}$/.test(digits);
      const code = valid ? Number.parseInt(digits, hex ? 16 : 10) : -1;
      if (code >= 0 && code <= 0x10ffff) decoded = String.fromCodePoint(code);
    } else {
      decoded = NAMED[xml.slice(amp + 1, semi)];
    }
    if (decoded === undefined) throw new XmlError(amp, `unknown reference ${xml.slice(amp, semi + 1)}`);
    if (amp > last) parts.push(xml.slice(last, amp));
    parts.push(decoded);
    last = semi + 1;
    amp = xml.indexOf('&', last);
  }
  if (last < end) parts.push(xml.slice(last, end));
  return parts.join('');
}

/** Parse `[l,t][r,b]` (integers, may be negative) in `xml[start, end)`; null when malformed. */
function parseBounds(xml: string, start: number, end: number): Bounds | null {
  const v = [0, 0, 0, 0];
  let p = start;
  for (let k = 0; k < 4; k++) {
    const open = k % 2 === 0 ? 91 /* [ */ : 44; /* , */
    if (xml.charCodeAt(p) !== open) return null;
    p++;
    let negative = false;
    if (xml.charCodeAt(p) === 45) {
      negative = true;
      p++;
    }
    const digitsStart = p;
    let n = 0;
    for (;;) {
      const d = xml.charCodeAt(p) - 48;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
      p++;
    }
    if (p === digitsStart || p - digitsStart > 10) return null;
    v[k] = negative ? -n : n;
    if (k % 2 === 1) {
      if (xml.charCodeAt(p) !== 93 /* ] */) return null;
      p++;
    }
  }
  if (p !== end) return null;
  const [l, t, r, b] = v as [number, number, number, number];
  return { x: l, y: t, width: r > l ? r - l : 0, height: b > t ? b - t : 0 };
}

function parseIntIn(xml: string, start: number, end: number): number | null {
  let p = start;
  let negative = false;
  if (xml.charCodeAt(p) === 45) {
    negative = true;
    p++;
  }
  if (p === end || end - p > 10) return null;
  let n = 0;
  for (; p < end; p++) {
    const d = xml.charCodeAt(p) - 48;
    if (d < 0 || d > 9) return null;
    n = n * 10 + d;
  }
  return negative ? -n : n;
}

function shortType(className: string): string {
  const dot = className.lastIndexOf('.');
  return dot === -1 ? className : className.slice(dot + 1);
}

function lineColumn(xml: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  let nl = xml.indexOf('\n');
  while (nl !== -1 && nl < offset) {
    line++;
    lineStart = nl + 1;
    nl = xml.indexOf('\n', lineStart);
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Normalize one uiautomator dump. Throws `BridgeError('HELPER_PROTOCOL_ERROR')` (details: `reason`,
 * `offset`, `line`, `column`) for malformed XML; never anything else.
 */
export function normalizeSnapshot(xml: string, options: NormalizeOptions = {}): NormalizedSnapshot {
  if (typeof xml !== 'string') {
    throw new BridgeError('HELPER_PROTOCOL_ERROR', 'snapshot XML must be a string', {
      details: { reason: 'not-a-string' },
    });
  }
  try {
    return new Scanner(xml, options.coverageThreshold ?? 0.9).run();
  } catch (err) {
    if (err instanceof XmlError) {
      const { line, column } = lineColumn(xml, err.offset);
      throw new BridgeError(
        'HELPER_PROTOCOL_ERROR',
        `invalid uiautomator XML at line ${line} column ${column}: ${err.reason}`,
        { details: { reason: err.reason, offset: err.offset, line, column } },
      );
    }
    if (err instanceof RangeError) {
      // e.g. a hostile document too large for a string/array; report as malformed input.
      throw new BridgeError('HELPER_PROTOCOL_ERROR', `cannot normalize snapshot XML: ${err.message}`, {
        details: { reason: 'too-large' },
      });
    }
    throw err;
  }
}

/** Attributes of the element being scanned (reset per element). */
interface Attrs {
  text: string;
  contentDesc: string;
  resourceId: string;
  className: string;
  pkg: string;
  hint: string;
  index: number;
  bounds: Bounds | null;
  visible: boolean;
  enabled: boolean;
  clickable: boolean;
  longClickable: boolean;
  focusable: boolean;
  focused: boolean;
  scrollable: boolean;
  checkable: boolean;
  checked: boolean;
  selected: boolean;
  password: boolean;
  canScrollForward: boolean | null;
  canScrollBackward: boolean | null;
  drawingOrder: number;
  rotation: number | null;
  windowIndex: number | null;
  windowType: number | null;
  windowLayer: number | null;
  windowActive: boolean | null;
  windowFocused: boolean | null;
  windowBounds: Bounds | null;
  displayId: number | null;
}

function emptyAttrs(): Attrs {
  return {
    text: '',
    contentDesc: '',
    resourceId: '',
    className: '',
    pkg: '',
    hint: '',
    index: -1,
    bounds: null,
    visible: true,
    enabled: false,
    clickable: false,
    longClickable: false,
    focusable: false,
    focused: false,
    scrollable: false,
    checkable: false,
    checked: false,
    selected: false,
    password: false,
    canScrollForward: null,
    canScrollBackward: null,
    drawingOrder: NO_ORDER,
    rotation: null,
    windowIndex: null,
    windowType: null,
    windowLayer: null,
    windowActive: null,
    windowFocused: null,
    windowBounds: null,
    displayId: null,
  };
}

class Scanner {
  readonly #xml: string;
  readonly #threshold: number;
  #nextAmp = -1;
  #nodes: SnapshotNode[] = [];
  // Per node ordinal: drawing order and the visible-content box [l, t, r, b] (l >= r: none);
  // private evidence for occlusion.
  #order = new Int32Array(1024);
  #extent = new Int32Array(4096);
  // Element stack: the node (null for <hierarchy> / unknown elements), the element name for
  // non-<node> elements, and where its children start in #childStack.
  #stackNode: Array<SnapshotNode | null> = [];
  #stackName: Array<string | null> = [];
  #stackChildStart: number[] = [];
  #childStack: number[] = [];
  #windowRoots: SnapshotNode[] = [];
  #rotation: number | null = null;
  #sawHierarchy = false;
  #hierarchyClosed = false;
  #a: Attrs = emptyAttrs();

  constructor(xml: string, threshold: number) {
    this.#xml = xml;
    this.#threshold = threshold;
  }

  run(): NormalizedSnapshot {
    const xml = this.#xml;
    const length = xml.length;
    let pos = 0;
    if (xml.charCodeAt(0) === 0xfeff) pos = 1;
    for (;;) {
      const lt = xml.indexOf('<', pos);
      if (lt === -1) {
        this.#checkText(pos, length);
        break;
      }
      this.#checkText(pos, lt);
      const c = xml.charCodeAt(lt + 1);
      if (c === 47 /* / */) {
        pos = this.#endTag(lt);
      } else if (c === 63 /* ? */) {
        const close = xml.indexOf('?>', lt + 2);
        if (close === -1) throw new XmlError(lt, 'unterminated processing instruction');
        pos = close + 2;
      } else if (c === 33 /* ! */) {
        pos = this.#markup(lt);
      } else {
        pos = this.#startTag(lt);
      }
      if (this.#hierarchyClosed) {
        // Anything after </hierarchy> (e.g. "UI hierchary dumped to: /dev/tty") is ignored.
        break;
      }
    }
    if (!this.#sawHierarchy) throw new XmlError(Math.min(pos, length), 'no <hierarchy> element');
    if (!this.#hierarchyClosed) {
      const open = this.#stackName[this.#stackName.length - 1] ?? 'hierarchy';
      throw new XmlError(length, `unexpected end of input inside <${open}>`);
    }
    const nodes = this.#nodes;
    const snapshot = {
      rotation: this.#rotation,
      windowCount: this.#windowRoots.length,
      nodeCount: nodes.length,
      windows: this.#windowRoots,
    } as NormalizedSnapshot;
    Object.defineProperty(snapshot, 'nodes', { value: nodes, enumerable: false });
    Object.defineProperty(snapshot, 'raw', { value: xml, enumerable: false });
    return snapshot;
  }

  /** Character data between tags: only whitespace is meaningful in uiautomator; text is ignored, but not outside the root. */
  #checkText(start: number, end: number): void {
    if (start >= end) return;
    if (this.#stackNode.length > 0) return;
    const xml = this.#xml;
    for (let i = start; i < end; i++) {
      if (!isSpace(xml.charCodeAt(i))) {
        throw new XmlError(
          i,
          this.#sawHierarchy ? 'text after the root element' : 'text before the root element',
        );
      }
    }
  }

  #markup(lt: number): number {
    const xml = this.#xml;
    if (xml.startsWith('<!--', lt)) {
      const close = xml.indexOf('-->', lt + 4);
      if (close === -1) throw new XmlError(lt, 'unterminated comment');
      return close + 3;
    }
    if (xml.startsWith('<![CDATA[', lt)) {
      if (this.#stackNode.length === 0) throw new XmlError(lt, 'CDATA outside the root element');
      const close = xml.indexOf(']]>', lt + 9);
      if (close === -1) throw new XmlError(lt, 'unterminated CDATA section');
      return close + 3;
    }
    if (xml.startsWith('<!DOCTYPE', lt) && this.#stackNode.length === 0 && !this.#sawHierarchy) {
      const close = xml.indexOf('>', lt);
      if (close === -1 || xml.lastIndexOf('[', close) > lt) throw new XmlError(lt, 'unsupported DOCTYPE');
      return close + 1;
    }
    throw new XmlError(lt, "unexpected '<!'");
  }

  #endTag(lt: number): number {
    const xml = this.#xml;
    const depth = this.#stackNode.length;
    if (depth === 0) throw new XmlError(lt, 'end tag without a start tag');
    let p = lt + 2;
    const nameStart = p;
    while (!isNameEnd(xml.charCodeAt(p))) p++;
    const nameEnd = p;
    while (isSpace(xml.charCodeAt(p))) p++;
    if (xml.charCodeAt(p) !== 62) throw new XmlError(p, "expected '>' in end tag");
    const node = this.#stackNode[depth - 1] as SnapshotNode | null;
    const expected = node === null ? (this.#stackName[depth - 1] as string) : 'node';
    if (nameEnd - nameStart !== expected.length || !xml.startsWith(expected, nameStart)) {
      throw new XmlError(lt, `end tag </${xml.slice(nameStart, nameEnd)}> does not match <${expected}>`);
    }
    this.#close();
    return p + 1;
  }

  #startTag(lt: number): number {
    const xml = this.#xml;
    let p = lt + 1;
    const nameStart = p;
    while (!isNameEnd(xml.charCodeAt(p))) p++;
    const nameLength = p - nameStart;
    if (nameLength === 0) throw new XmlError(lt, "expected an element name after '<'");
    const isNode = nameLength === 4 && xml.startsWith('node', nameStart);
    const isHierarchy = !isNode && nameLength === 9 && xml.startsWith('hierarchy', nameStart);
    const depth = this.#stackNode.length;
    if (depth === 0) {
      if (this.#sawHierarchy) throw new XmlError(lt, 'more than one root element');
      if (!isHierarchy)
        throw new XmlError(lt, `root element is <${xml.slice(nameStart, p)}>, not <hierarchy>`);
    }
    const a = this.#a;
    this.#resetAttrs(a);
    const end = this.#attributes(p, lt);
    const selfClosing = xml.charCodeAt(end - 2) === 47;
    if (depth === 0) {
      this.#sawHierarchy = true;
      this.#rotation = a.rotation;
      this.#push(null, 'hierarchy');
      if (selfClosing) this.#close();
      return end;
    }
    if (!isNode) {
      this.#push(null, xml.slice(nameStart, nameStart + nameLength));
      if (selfClosing) this.#close();
      return end;
    }
    const node = this.#makeNode(a);
    const ordinal = this.#nodes.length - 1;
    this.#childStack.push(ordinal);
    if (depth === 1 && this.#stackNode[0] === null) {
      node.window = this.#windowInfo(a, this.#windowRoots.length);
      this.#windowRoots.push(node);
    } else {
      // Attach to the nearest enclosing node (unknown elements are transparent); none → a root.
      let parent: SnapshotNode | null = null;
      for (let d = depth - 1; d >= 0 && parent === null; d--)
        parent = this.#stackNode[d] as SnapshotNode | null;
      if (parent === null) {
        node.window = this.#windowInfo(a, this.#windowRoots.length);
        this.#windowRoots.push(node);
      } else {
        parent.children.push(node);
      }
    }
    if (selfClosing) {
      this.#setExtent(ordinal, node, 0, 0);
      this.#finishScroll(node, ordinal, this.#childStack.length, this.#childStack.length);
      return end;
    }
    this.#push(node, null);
    return end;
  }

  #push(node: SnapshotNode | null, name: string | null): void {
    this.#stackNode.push(node);
    this.#stackName.push(name);
    this.#stackChildStart.push(this.#childStack.length);
  }

  /** Pop the top element: resolve occlusion among its direct node children, then content/scroll. */
  #close(): void {
    const node = this.#stackNode.pop() as SnapshotNode | null;
    const name = this.#stackName.pop();
    const childStart = this.#stackChildStart.pop() as number;
    const childEnd = this.#childStack.length;
    if (childEnd - childStart > 1) this.#occlusion(childStart, childEnd);
    if (node !== null) {
      const ordinal = this.#childStack[childStart - 1] as number;
      this.#setExtent(ordinal, node, childStart, childEnd);
      this.#finishScroll(node, ordinal, childStart, childEnd);
    } else if (name === 'hierarchy') {
      this.#hierarchyClosed = true;
    }
    // Children of an unknown element stay on the child stack: they belong to the enclosing node.
    if (node !== null || name === 'hierarchy') this.#childStack.length = childStart;
  }

  /** Visible-content box of a node whose children (childStack[childStart, childEnd)) are done. */
  #setExtent(ordinal: number, node: SnapshotNode, childStart: number, childEnd: number): void {
    const ext = this.#extent;
    const o = ordinal * 4;
    ext[o] = 0;
    ext[o + 2] = 0;
    const b = node.bounds;
    if (!node.visible || b === null || b.width === 0 || b.height === 0) return;
    const right = b.x + b.width;
    const bottom = b.y + b.height;
    if (
      node.text.length > 0 ||
      node.contentDesc.length > 0 ||
      node.clickable ||
      node.longClickable ||
      node.scrollable ||
      node.checkable
    ) {
      ext[o] = b.x;
      ext[o + 1] = b.y;
      ext[o + 2] = right;
      ext[o + 3] = bottom;
      return;
    }
    let l = right;
    let t = bottom;
    let r = b.x;
    let bt = b.y;
    for (let i = childStart; i < childEnd; i++) {
      const c = (this.#childStack[i] as number) * 4;
      const cl = ext[c] as number;
      const cr = ext[c + 2] as number;
      if (cl >= cr) continue;
      if (cl < l) l = cl;
      if ((ext[c + 1] as number) < t) t = ext[c + 1] as number;
      if (cr > r) r = cr;
      if ((ext[c + 3] as number) > bt) bt = ext[c + 3] as number;
    }
    // Clip to the node's own bounds.
    if (l < b.x) l = b.x;
    if (t < b.y) t = b.y;
    if (r > right) r = right;
    if (bt > bottom) bt = bottom;
    if (l < r && t < bt) {
      ext[o] = l;
      ext[o + 1] = t;
      ext[o + 2] = r;
      ext[o + 3] = bt;
    }
  }

  #finishScroll(node: SnapshotNode, _ordinal: number, childStart: number, childEnd: number): void {
    if (!node.scrollable) return;
    if (node.canScrollForward !== null && node.canScrollBackward !== null) return;
    const b = node.bounds;
    let forward = false;
    let backward = false;
    if (b !== null) {
      const right = b.x + b.width;
      const bottom = b.y + b.height;
      for (let i = childStart; i < childEnd; i++) {
        const cb = (this.#nodes[this.#childStack[i] as number] as SnapshotNode).bounds;
        if (cb === null || cb.width === 0 || cb.height === 0) continue;
        if (cb.y + cb.height > bottom || cb.x + cb.width > right) forward = true;
        if (cb.y < b.y || cb.x < b.x) backward = true;
      }
    }
    if (node.canScrollForward === null) node.canScrollForward = forward;
    if (node.canScrollBackward === null) node.canScrollBackward = backward;
  }

  #occlusion(childStart: number, childEnd: number): void {
    const stack = this.#childStack;
    const order = this.#order;
    for (let i = childStart; i < childEnd - 1; i++) {
      const oi = stack[i] as number;
      const di = order[oi] as number;
      if (di === NO_ORDER) continue;
      const a = this.#nodes[oi] as SnapshotNode;
      const ab = a.bounds;
      if (ab === null || ab.width === 0 || ab.height === 0) continue;
      const need = ab.width * ab.height * this.#threshold;
      for (let j = i + 1; j < childEnd; j++) {
        const oj = stack[j] as number;
        const dj = order[oj] as number;
        if (dj === NO_ORDER || dj <= di) continue;
        const ext = this.#extent;
        const e = oj * 4;
        const l = ext[e] as number;
        const r = ext[e + 2] as number;
        if (l >= r) continue;
        const by: Bounds = {
          x: l,
          y: ext[e + 1] as number,
          width: r - l,
          height: (ext[e + 3] as number) - (ext[e + 1] as number),
        };
        if (overlap(ab, by) >= need) {
          this.#cover(a, by);
          break;
        }
      }
    }
  }

  /** Mark `node` covered by `by`, and its descendants that are ≥ threshold inside `by`. */
  #cover(node: SnapshotNode, by: Bounds): void {
    node.covered = true;
    node.hittable = false;
    const pending: SnapshotNode[] = [...node.children];
    while (pending.length > 0) {
      const child = pending.pop() as SnapshotNode;
      const cb = child.bounds;
      if (
        cb !== null &&
        cb.width > 0 &&
        cb.height > 0 &&
        overlap(cb, by) >= cb.width * cb.height * this.#threshold
      ) {
        child.covered = true;
        child.hittable = false;
      }
      for (const grandchild of child.children) pending.push(grandchild);
    }
  }

  #windowInfo(a: Attrs, position: number): WindowInfo {
    const info: WindowInfo = { index: a.windowIndex ?? position, rotation: this.#rotation, package: a.pkg };
    if (a.displayId !== null) info.displayId = a.displayId;
    if (a.windowType !== null) info.type = a.windowType;
    if (a.windowLayer !== null) info.layer = a.windowLayer;
    if (a.windowActive !== null) info.active = a.windowActive;
    if (a.windowFocused !== null) info.focused = a.windowFocused;
    if (a.windowBounds !== null) info.bounds = a.windowBounds;
    return info;
  }

  #makeNode(a: Attrs): SnapshotNode {
    const nodes = this.#nodes;
    const ordinal = nodes.length;
    if (ordinal === this.#order.length) {
      const order = new Int32Array(ordinal * 2);
      order.set(this.#order);
      this.#order = order;
      const extent = new Int32Array(ordinal * 8);
      extent.set(this.#extent);
      this.#extent = extent;
    }
    this.#order[ordinal] = a.drawingOrder;
    const b = a.bounds;
    const node: SnapshotNode = {
      ref: `e${ordinal + 1}`,
      type: shortType(a.className),
      className: a.className,
      text: a.text,
      contentDesc: a.contentDesc,
      resourceId: a.resourceId,
      package: a.pkg,
      hint: a.hint,
      index: a.index,
      bounds: b,
      visible: a.visible,
      enabled: a.enabled,
      clickable: a.clickable,
      longClickable: a.longClickable,
      focusable: a.focusable,
      focused: a.focused,
      scrollable: a.scrollable,
      checkable: a.checkable,
      checked: a.checked,
      selected: a.selected,
      password: a.password,
      canScrollForward: a.scrollable ? a.canScrollForward : null,
      canScrollBackward: a.scrollable ? a.canScrollBackward : null,
      covered: false,
      hittable: a.visible && b !== null && b.width > 0 && b.height > 0,
      window: null,
      children: [],
    };
    nodes.push(node);
    return node;
  }

  #resetAttrs(a: Attrs): void {
    a.text = '';
    a.contentDesc = '';
    a.resourceId = '';
    a.className = '';
    a.pkg = '';
    a.hint = '';
    a.index = -1;
    a.bounds = null;
    a.visible = true;
    a.enabled = false;
    a.clickable = false;
    a.longClickable = false;
    a.focusable = false;
    a.focused = false;
    a.scrollable = false;
    a.checkable = false;
    a.checked = false;
    a.selected = false;
    a.password = false;
    a.canScrollForward = null;
    a.canScrollBackward = null;
    a.drawingOrder = NO_ORDER;
    a.rotation = null;
    a.windowIndex = null;
    a.windowType = null;
    a.windowLayer = null;
    a.windowActive = null;
    a.windowFocused = null;
    a.windowBounds = null;
    a.displayId = null;
  }

  /** Scan attributes from `p` to the end of the start tag; returns the offset after '>'. */
  #attributes(start: number, lt: number): number {
    const xml = this.#xml;
    const a = this.#a;
    // The next '<' bounds the tag: a value or the closing '>' beyond it means '<' inside the tag.
    const nextLt = xml.indexOf('<', start);
    const limit = nextLt === -1 ? xml.length : nextLt;
    let p = start;
    for (;;) {
      let c = xml.charCodeAt(p);
      const hadSpace = isSpace(c);
      while (isSpace(c)) c = xml.charCodeAt(++p);
      if (p > limit) throw new XmlError(limit, "'<' inside a tag");
      if (c === 62 /* > */) return p + 1;
      if (c === 47 /* / */) {
        if (xml.charCodeAt(p + 1) !== 62) throw new XmlError(p, "expected '>' after '/'");
        return p + 2;
      }
      if (Number.isNaN(c)) throw new XmlError(lt, 'unterminated start tag');
      if (!hadSpace) throw new XmlError(p, 'expected whitespace before an attribute');
      const nameStart = p;
      while (!isNameEnd(c)) c = xml.charCodeAt(++p);
      const nameEnd = p;
      if (nameEnd === nameStart) throw new XmlError(p, 'expected an attribute name');
      while (isSpace(c)) c = xml.charCodeAt(++p);
      if (c !== 61 /* = */) throw new XmlError(p, "expected '=' after an attribute name");
      c = xml.charCodeAt(++p);
      while (isSpace(c)) c = xml.charCodeAt(++p);
      if (c !== 34 && c !== 39) throw new XmlError(p, 'expected a quoted attribute value');
      const valueStart = p + 1;
      const valueEnd = xml.indexOf(c === 34 ? '"' : "'", valueStart);
      if (valueEnd === -1) throw new XmlError(p, 'unterminated attribute value');
      if (valueEnd > limit) throw new XmlError(limit, "'<' in an attribute value");
      p = valueEnd + 1;
      this.#attribute(a, nameStart, nameEnd - nameStart, valueStart, valueEnd);
    }
  }

  #string(start: number, end: number): string {
    if (start === end) return '';
    const xml = this.#xml;
    let amp = this.#nextAmp;
    if (amp !== -2 && amp < start) {
      amp = xml.indexOf('&', start);
      if (amp === -1) amp = -2; // no '&' anywhere after: never search again
      this.#nextAmp = amp;
    }
    const raw = amp >= 0 && amp < end;
    return raw ? decodeEntities(xml, start, end) : xml.slice(start, end);
  }

  #bool(start: number, end: number): boolean {
    return end - start === 4 && this.#xml.charCodeAt(start) === 116;
  }

  #attribute(a: Attrs, n: number, length: number, vs: number, ve: number): void {
    const xml = this.#xml;
    const c0 = xml.charCodeAt(n);
    switch (length) {
      case 4:
        if (c0 === 116 && xml.startsWith('text', n)) a.text = this.#string(vs, ve);
        else if (c0 === 104 && xml.startsWith('hint', n)) a.hint = this.#string(vs, ve);
        else this.#skip(vs, ve);
        return;
      case 5:
        if (c0 === 99 && xml.startsWith('class', n)) a.className = this.#string(vs, ve);
        else if (c0 === 105 && xml.startsWith('index', n)) a.index = parseIntIn(xml, vs, ve) ?? -1;
        else this.#skip(vs, ve);
        return;
      case 6:
        if (c0 === 98 && xml.startsWith('bounds', n)) a.bounds = parseBounds(xml, vs, ve);
        else this.#skip(vs, ve);
        return;
      case 7:
        if (c0 === 112 && xml.startsWith('package', n)) a.pkg = this.#string(vs, ve);
        else if (c0 === 99 && xml.startsWith('checked', n)) a.checked = this.#bool(vs, ve);
        else if (c0 === 101 && xml.startsWith('enabled', n)) a.enabled = this.#bool(vs, ve);
        else if (c0 === 102 && xml.startsWith('focused', n)) a.focused = this.#bool(vs, ve);
        else this.#skip(vs, ve);
        return;
      case 8:
        if (c0 === 112 && xml.startsWith('password', n)) a.password = this.#bool(vs, ve);
        else if (c0 === 115 && xml.startsWith('selected', n)) a.selected = this.#bool(vs, ve);
        else if (c0 === 114 && xml.startsWith('rotation', n)) a.rotation = parseIntIn(xml, vs, ve);
        else this.#skip(vs, ve);
        return;
      case 9:
        if (c0 === 99) {
          if (xml.startsWith('clickable', n)) a.clickable = this.#bool(vs, ve);
          else if (xml.startsWith('checkable', n)) a.checkable = this.#bool(vs, ve);
          else this.#skip(vs, ve);
        } else if (c0 === 102 && xml.startsWith('focusable', n)) a.focusable = this.#bool(vs, ve);
        else this.#skip(vs, ve);
        return;
      case 10:
        if (c0 === 115 && xml.startsWith('scrollable', n)) a.scrollable = this.#bool(vs, ve);
        else if (c0 === 100 && xml.startsWith('display-id', n)) a.displayId = parseIntIn(xml, vs, ve);
        else this.#skip(vs, ve);
        return;
      case 11:
        if (c0 === 114 && xml.startsWith('resource-id', n)) a.resourceId = this.#string(vs, ve);
        else if (c0 === 119 && xml.startsWith('window-type', n)) a.windowType = parseIntIn(xml, vs, ve);
        else this.#skip(vs, ve);
        return;
      case 12:
        if (c0 === 99 && xml.startsWith('content-desc', n)) a.contentDesc = this.#string(vs, ve);
        else if (c0 === 119 && xml.startsWith('window-index', n)) a.windowIndex = parseIntIn(xml, vs, ve);
        else if (c0 === 119 && xml.startsWith('window-layer', n)) a.windowLayer = parseIntIn(xml, vs, ve);
        else this.#skip(vs, ve);
        return;
      case 13:
        if (c0 === 100 && xml.startsWith('drawing-order', n))
          a.drawingOrder = parseIntIn(xml, vs, ve) ?? NO_ORDER;
        else if (c0 === 119 && xml.startsWith('window-active', n)) a.windowActive = this.#bool(vs, ve);
        else if (c0 === 119 && xml.startsWith('window-bounds', n)) a.windowBounds = parseBounds(xml, vs, ve);
        else this.#skip(vs, ve);
        return;
      case 14:
        if (c0 === 108 && xml.startsWith('long-clickable', n)) a.longClickable = this.#bool(vs, ve);
        else if (c0 === 119 && xml.startsWith('window-focused', n)) a.windowFocused = this.#bool(vs, ve);
        else this.#skip(vs, ve);
        return;
      case 15:
        if (c0 === 118 && xml.startsWith('visible-to-user', n)) a.visible = this.#bool(vs, ve);
        else this.#skip(vs, ve);
        return;
      case 18:
        if (c0 === 99 && xml.startsWith('can-scroll-forward', n)) a.canScrollForward = this.#bool(vs, ve);
        else this.#skip(vs, ve);
        return;
      case 19:
        if (c0 === 99 && xml.startsWith('can-scroll-backward', n)) a.canScrollBackward = this.#bool(vs, ve);
        else this.#skip(vs, ve);
        return;
      default:
        this.#skip(vs, ve);
    }
  }

  /** An attribute we do not keep (vendor extras such as `xpos`). */
  #skip(_vs: number, _ve: number): void {}
}

function overlap(a: Bounds, b: Bounds): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  if (w <= 0) return 0;
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return h <= 0 ? 0 : w * h;
}
