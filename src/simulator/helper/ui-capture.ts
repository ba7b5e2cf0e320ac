/**
 * What the emulated helper "captures" from the device's uiautomator XML: the document cut to
 * `maxDepth`/`maxNodes` the way the real helper's traversal cuts it (preorder; a node at depth
 * `maxDepth` keeps no children; once `maxNodes` nodes are written every later node is dropped), plus
 * the counts it reports, and the viewport of the active application window. Pure string work: one
 * forward scan, no DOM, and the input string itself is returned when nothing was cut.
 */

export interface CaptureResult {
  xml: string;
  nodeCount: number;
  windowCount: number;
  truncated: boolean;
  rootPresent: boolean;
  captureMode: 'interactive-windows' | 'active-window';
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** End index (inclusive) of the tag starting at `start`, skipping `>` inside quoted attribute values. */
function tagEnd(xml: string, start: number): number {
  let i = start + 1;
  let quote = 0;
  for (; i < xml.length; i += 1) {
    const c = xml.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 34 || c === 39) {
      quote = c;
    } else if (c === 62) {
      return i;
    }
  }
  return -1;
}

function isNodeTag(xml: string, at: number): boolean {
  // `<node` followed by whitespace, `>` or `/`.
  if (!xml.startsWith('node', at)) return false;
  const c = xml.charCodeAt(at + 4);
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 62 || c === 47;
}

interface ScanHandlers {
  /** Return false to drop the node and its subtree. */
  open(depth: number, tagStart: number, tagEnd: number): boolean;
}

/**
 * Walk `<node>` elements in document order. Returns the kept text (original slices) and whether
 * anything was dropped. Comments and processing instructions are copied through.
 *
 * A kept node whose first child is dropped is written as a leaf (`<node ... />`), as the helper's
 * serializer writes a node without written children: both limits drop every later sibling once one
 * child is dropped (all children share a depth; maxNodes only grows stricter), so its other
 * children are skipped with it.
 */
function scanNodes(xml: string, handlers: ScanHandlers): { xml: string; dropped: boolean } {
  const out: string[] = [];
  let copyFrom = 0;
  let pos = 0;
  let depth = -1;
  let skipNest = 0;
  /** The skipped region is the rest of a collapsed parent: leaving it closes that parent. */
  let collapsing = false;
  let dropped = false;
  /** Per open depth: end index of the node's open tag, and how many children it kept so far. */
  const openEnd: number[] = [];
  const kept: number[] = [];
  for (;;) {
    const lt = xml.indexOf('<', pos);
    if (lt < 0) break;
    const next = xml.charCodeAt(lt + 1);
    if (next === 33 /* ! */) {
      const close = xml.startsWith('<!--', lt) ? xml.indexOf('-->', lt + 4) : xml.indexOf('>', lt);
      if (close < 0) break;
      pos = close + (xml.startsWith('<!--', lt) ? 3 : 1);
      continue;
    }
    if (next === 63 /* ? */) {
      const close = xml.indexOf('?>', lt + 2);
      if (close < 0) break;
      pos = close + 2;
      continue;
    }
    const end = tagEnd(xml, lt);
    if (end < 0) break;
    pos = end + 1;
    if (next === 47 /* / */) {
      if (!isNodeTag(xml, lt + 2)) continue;
      if (skipNest > 0) {
        skipNest -= 1;
        if (skipNest === 0) {
          copyFrom = end + 1;
          if (collapsing) {
            depth -= 1;
            collapsing = false;
          }
        }
      } else {
        depth -= 1;
      }
      continue;
    }
    if (!isNodeTag(xml, lt + 1)) continue;
    const selfClosing = xml.charCodeAt(end - 1) === 47;
    if (skipNest > 0) {
      if (!selfClosing) skipNest += 1;
      continue;
    }
    const nodeDepth = depth + 1;
    if (handlers.open(nodeDepth, lt, end)) {
      if (nodeDepth > 0) kept[nodeDepth - 1] = (kept[nodeDepth - 1] ?? 0) + 1;
      if (!selfClosing) {
        depth = nodeDepth;
        openEnd[nodeDepth] = end;
        kept[nodeDepth] = 0;
      }
      continue;
    }
    dropped = true;
    const parent = nodeDepth - 1;
    if (parent >= 0 && kept[parent] === 0) {
      // Collapse the parent into a leaf and skip the rest of it, up to and with its close tag.
      out.push(`${xml.slice(copyFrom, openEnd[parent])} />`);
      skipNest = selfClosing ? 1 : 2;
      collapsing = true;
      continue;
    }
    out.push(xml.slice(copyFrom, lt));
    if (selfClosing) copyFrom = end + 1;
    else skipNest = 1;
  }
  if (!dropped) return { xml, dropped };
  out.push(xml.slice(copyFrom));
  return { xml: out.join(''), dropped };
}

let lastCapture: { xml: string; maxDepth: number; maxNodes: number; result: CaptureResult } | undefined;

/** Cut `xml` to the helper's limits and count what was kept. */
export function captureUiXml(xml: string, maxDepth: number, maxNodes: number): CaptureResult {
  if (
    lastCapture &&
    lastCapture.xml === xml &&
    lastCapture.maxDepth === maxDepth &&
    lastCapture.maxNodes === maxNodes
  ) {
    return lastCapture.result;
  }
  let nodeCount = 0;
  let windowCount = 0;
  let sourceRoots = 0;
  const cut = scanNodes(xml, {
    open(depth) {
      if (depth === 0) sourceRoots += 1;
      if (nodeCount >= maxNodes || depth > maxDepth) return false;
      nodeCount += 1;
      if (depth === 0) windowCount += 1;
      return true;
    },
  });
  const result: CaptureResult = {
    xml: cut.xml,
    nodeCount,
    windowCount,
    truncated: cut.dropped,
    rootPresent: sourceRoots > 0,
    captureMode: sourceRoots > 0 ? 'interactive-windows' : 'active-window',
  };
  lastCapture = { xml, maxDepth, maxNodes, result };
  return result;
}

const ATTR_RE = /\s([\w:-]+)="([^"]*)"/g;

function attributes(tag: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const m of tag.matchAll(ATTR_RE)) map.set(m[1] as string, m[2] as string);
  return map;
}

const BOUNDS_RE = /^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$/;

function parseBounds(value: string | undefined): Rect | undefined {
  const m = value === undefined ? null : BOUNDS_RE.exec(value);
  if (!m) return undefined;
  const [l, t, r, b] = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
  if (r <= l || b <= t) return undefined;
  return { x: l, y: t, width: r - l, height: b - t };
}

/** Window roots of a uiautomator document, as attribute maps. */
export function windowRoots(xml: string): Array<Map<string, string>> {
  const roots: Array<Map<string, string>> = [];
  scanNodes(xml, {
    open(depth, start, end) {
      if (depth === 0) roots.push(attributes(xml.slice(start, end + 1)));
      return depth === 0;
    },
  });
  return roots;
}

const NON_APP_PACKAGE = /^com\.android\.systemui$|inputmethod|keyboard/i;

/**
 * The window roots in the order the helper's viewport reader and the accessibility service's
 * `getRootInActiveWindow` consider them, as indices into `roots` (repeats allowed): with window
 * metadata, application windows (type 1) that are active or focused, then every application window;
 * then the roots that are neither system UI nor a keyboard; then every root.
 */
export function activeRootOrder(roots: ReadonlyArray<ReadonlyMap<string, string>>): number[] {
  const order: number[] = [];
  const indices = roots.map((_, i) => i);
  const apps = indices.filter((i) => roots[i]!.get('window-type') === '1');
  for (const i of apps) {
    const r = roots[i]!;
    if (r.get('window-active') === 'true' || r.get('window-focused') === 'true') order.push(i);
  }
  order.push(...apps);
  order.push(...indices.filter((i) => !NON_APP_PACKAGE.test(roots[i]!.get('package') ?? '')));
  order.push(...indices);
  return order;
}

/**
 * The active application window's bounds: the first root in `activeRootOrder` with non-empty
 * bounds (its window bounds when it has window metadata). Undefined when there is none.
 */
export function activeViewport(xml: string): Rect | undefined {
  const roots = windowRoots(xml);
  for (const i of activeRootOrder(roots)) {
    const r = roots[i]!;
    const b = parseBounds(r.get('window-bounds')) ?? parseBounds(r.get('bounds'));
    if (b) return b;
  }
  return undefined;
}
