/**
 * The tree semantics of a uiautomator dump, built from the scanner's events (`xml-scanner.ts`):
 *
 * - refs `e1`, `e2`, … in document order; `type` is the short class name.
 * - `visible` from `visible-to-user` when present, else true.
 * - window roots (direct children of `<hierarchy>`; also a `<node>` with no enclosing node) carry
 *   `window`: index (`window-index`, else position), rotation (from `<hierarchy rotation>`), package,
 *   and display-id / window-type / window-layer / active / focused / bounds when present. A `<node>`
 *   inside an unknown element attaches to the nearest enclosing node.
 * - scroll hints on scrollable nodes: `can-scroll-forward/backward` attributes when present, else
 *   derived from children whose bounds extend past the container (below/right → forward,
 *   above/left → backward).
 * - occlusion: a node ≥ 90 % of whose area is covered by the visible content of a later sibling
 *   with a higher `drawing-order` gets `covered: true`, `hittable: false`; so do its descendants
 *   that are ≥ 90 % inside that content. A sibling's visible content is its own bounds when it is
 *   visible, non-empty and shows or does something (text, content-desc, clickable, long-clickable,
 *   scrollable, checkable), else the bounding box of its children's visible content (clipped to
 *   it): a transparent full-screen container holding one small search bar covers only the bar.
 *   `drawing-order` itself stays out of the nodes (private capture evidence in the snapshot helper contract). Siblings are
 *   the node children of one element: those of an unknown element are compared among themselves
 *   when it closes, then again with the enclosing node's other children.
 * - `hittable` = visible && non-empty bounds && !covered.
 */
import { formatNodeRef } from './node-ref.ts';
import type { Bounds, NormalizedSnapshot, SnapshotNode, WindowInfo } from './types.ts';
import { NO_ORDER, type ScannedAttributes, type ScanSink } from './xml-scanner.ts';

/** The short class name of a node (`android.widget.Button` → `Button`). */
export function shortType(className: string): string {
  const dot = className.lastIndexOf('.');
  return dot === -1 ? className : className.slice(dot + 1);
}

function overlap(a: Bounds, b: Bounds): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  if (w <= 0) return 0;
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return h <= 0 ? 0 : w * h;
}

/** The children of every leaf: one shared empty array (a tree is mostly leaves). */
const NO_CHILDREN: SnapshotNode[] = Object.freeze([]) as unknown as SnapshotNode[];

/** First size of the per-slot scratch (child-stack slots; doubled when a document needs more). */
const SLOTS = 256;

export class TreeBuilder implements ScanSink {
  readonly #threshold: number;
  // Every node in document order; made at the estimated size (sizeHint) and cut to #count at the
  // end, so that it is not regrown (and copied) as it fills.
  #nodes: SnapshotNode[];
  #count = 0;
  // Open elements: the node (null for <hierarchy> / unknown elements) and where its children start
  // in #childStack (the ordinals of the node children of every open element).
  #stackNode: Array<SnapshotNode | null> = [];
  #stackChildStart: number[] = [];
  #childStack: number[] = [];
  // Per #childStack slot (the node at that slot): drawing order and the visible-content box
  // [l, t, r, b] (l >= r: none); private evidence for occlusion. Only siblings on the child stack
  // are ever compared, and a slot is reused only once its node has left the stack, so the scratch
  // is as long as the child stack (depth × siblings), not the document (was one entry per node:
  // 20 bytes a node, 0.08× the XML of a 5,000-node dump).
  #order = new Int32Array(SLOTS);
  #extent = new Int32Array(SLOTS * 4);
  #windowRoots: SnapshotNode[] = [];
  #rotation: number | null = null;
  // Short type per class name (the scanner shares equal class names: one entry per class).
  #types = new Map<string, string>();

  /**
   * `threshold`: share of a node's area a covering sibling must hide. `sizeHint`: the document's
   * length, for the first size of the node list (about one node per 256 characters: a dump's
   * `<node>` tag with its ~20 attributes is longer than that).
   */
  constructor(threshold: number, sizeHint = 0) {
    this.#threshold = threshold;
    // Beyond ~100,000 slots `new Array(n)` makes a dictionary-mode array: cap the estimate there.
    this.#nodes = new Array<SnapshotNode>(Math.min(Math.max(1024, Math.ceil(sizeHint / 256)), 65_536));
  }

  /** The snapshot of everything reported so far (call after the scan). */
  result(xml: string): NormalizedSnapshot {
    const nodes = this.#nodes;
    if (nodes.length > this.#count) nodes.length = this.#count;
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

  openHierarchy(a: ScannedAttributes): void {
    this.#rotation = a.rotation;
    this.#push(null);
  }

  openElement(): void {
    this.#push(null);
  }

  openNode(a: ScannedAttributes, selfClosing: boolean): void {
    const node = this.#makeNode(a);
    const ordinal = this.#count - 1;
    const slot = this.#childStack.length;
    if (slot === this.#order.length) this.#growSlots();
    this.#order[slot] = a.drawingOrder;
    this.#childStack.push(ordinal);
    const depth = this.#stackNode.length;
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
      }
      // else: a child of `parent`; its children array is made, exactly sized, when it closes.
    }
    if (selfClosing) {
      this.#setExtent(slot, node, 0, 0);
      this.#finishScroll(node, this.#childStack.length, this.#childStack.length);
      return;
    }
    this.#push(node);
  }

  closeNode(): void {
    this.#close(false);
  }

  closeElement(hierarchy: boolean): void {
    this.#close(hierarchy);
  }

  #push(node: SnapshotNode | null): void {
    this.#stackNode.push(node);
    this.#stackChildStart.push(this.#childStack.length);
  }

  /** Pop the top element: resolve occlusion among its direct node children, then content/scroll. */
  #close(hierarchy: boolean): void {
    const node = this.#stackNode.pop() as SnapshotNode | null;
    const childStart = this.#stackChildStart.pop() as number;
    const childEnd = this.#childStack.length;
    if (childEnd - childStart > 1) this.#occlusion(childStart, childEnd);
    if (node !== null) {
      // The node's children are the node ordinals above it on the child stack (those inside
      // unknown elements included), in document order.
      if (childEnd > childStart) {
        const children = new Array<SnapshotNode>(childEnd - childStart);
        for (let i = childStart; i < childEnd; i++) {
          children[i - childStart] = this.#nodes[this.#childStack[i] as number] as SnapshotNode;
        }
        node.children = children;
      }
      this.#setExtent(childStart - 1, node, childStart, childEnd);
      this.#finishScroll(node, childStart, childEnd);
    }
    // Children of an unknown element stay on the child stack: they belong to the enclosing node.
    if (node !== null || hierarchy) this.#childStack.length = childStart;
  }

  /** Room for twice as many child-stack slots (the scratch kept for the slots in use). */
  #growSlots(): void {
    const order = new Int32Array(this.#order.length * 2);
    order.set(this.#order);
    this.#order = order;
    const extent = new Int32Array(this.#extent.length * 2);
    extent.set(this.#extent);
    this.#extent = extent;
  }

  /**
   * Visible-content box of the node at child-stack `slot` whose children (the slots
   * [childStart, childEnd)) are done.
   */
  #setExtent(slot: number, node: SnapshotNode, childStart: number, childEnd: number): void {
    const ext = this.#extent;
    const o = slot * 4;
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
      const c = i * 4;
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

  /** Scroll hints of a scrollable node the helper did not annotate, from its children's bounds. */
  #finishScroll(node: SnapshotNode, childStart: number, childEnd: number): void {
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
      const di = order[i] as number;
      if (di === NO_ORDER) continue;
      const a = this.#nodes[stack[i] as number] as SnapshotNode;
      const ab = a.bounds;
      if (ab === null || ab.width === 0 || ab.height === 0) continue;
      const need = ab.width * ab.height * this.#threshold;
      for (let j = i + 1; j < childEnd; j++) {
        const dj = order[j] as number;
        if (dj === NO_ORDER || dj <= di) continue;
        const ext = this.#extent;
        const e = j * 4;
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

  #windowInfo(a: ScannedAttributes, position: number): WindowInfo {
    const info: WindowInfo = { index: a.windowIndex ?? position, rotation: this.#rotation, package: a.pkg };
    if (a.displayId !== null) info.displayId = a.displayId;
    if (a.windowType !== null) info.type = a.windowType;
    if (a.windowLayer !== null) info.layer = a.windowLayer;
    if (a.windowActive !== null) info.active = a.windowActive;
    if (a.windowFocused !== null) info.focused = a.windowFocused;
    if (a.windowBounds !== null) info.bounds = a.windowBounds;
    return info;
  }

  #type(className: string): string {
    let type = this.#types.get(className);
    if (type === undefined) {
      type = shortType(className);
      this.#types.set(className, type);
    }
    return type;
  }

  #makeNode(a: ScannedAttributes): SnapshotNode {
    const nodes = this.#nodes;
    const ordinal = this.#count;
    const b = a.bounds;
    const node: SnapshotNode = {
      ref: formatNodeRef(ordinal),
      type: this.#type(a.className),
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
      children: NO_CHILDREN,
    };
    if (ordinal < nodes.length) nodes[ordinal] = node;
    else nodes.push(node);
    this.#count = ordinal + 1;
    return node;
  }
}
