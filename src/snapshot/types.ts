/** The normalized snapshot tree (`normalizeSnapshot`'s result): what the API and the client see. */

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
